package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeReportCheck runs prebake upgrade-report over the file://
// fixture testdata/upgrade-repo: the text report, and --check's exit codes
// (66: an artifact without a build for the target; 65: a base image of
// another line; 0: nothing breaks; 64: usage).
func TestUpgradeReportCheck(t *testing.T) {
	root, tmp := isolatedCLI(t)
	repo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "upgrade-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0"
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
	}{
		{"missing build", []string{"--to", "4.0", "--check", "--packages", "org.apache.spark:spark-avro_2.12:3.5.1,com.example:lib-none_2.12:1.0"}, 66,
			"no build for Spark 4.0.1 (Scala 2.13) at any version"},
		{"missing build, no --check", []string{"--to", "4.0", "--packages", "org.apache.spark:spark-avro_2.12:3.5.1,com.example:lib-none_2.12:1.0"}, 0,
			"NO BUILD FOR THE TARGET"},
		{"base of another line", []string{"--to", "4.0.0", "--check", "--base", base, "--packages", "org.apache.spark:spark-avro_2.12:3.5.1"}, 65,
			"has Spark 3.5.0, not the target line 4.0"},
		{"nothing breaks", []string{"--to", "4.0", "--check", "--packages", "org.apache.spark:spark-avro_2.12:3.5.1,org.apache.hadoop:hadoop-aws:3.3.4"}, 0,
			"~ org.tukaani:xz 1.9 → 1.10 (upgrade)"},
		{"alias, argv after --", []string{"--to", "4.0.1", "--from", "3.5.1", "--", "--master", "local[2]", "--packages", "org.apache.spark:spark-avro_2.12:3.5.1", "app.jar"}, 0,
			"org.apache.spark:spark-avro_2.13:4.0.1"},
		{"no --to", []string{"--packages", "org.apache.spark:spark-avro_2.12:3.5.1"}, 64, ""},
		{"stray argument", []string{"--to", "4.0", "org.apache.spark:spark-avro_2.12:3.5.1"}, 64, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := "upgrade-report"
			if strings.HasPrefix(tc.name, "alias") {
				cmd = "plan-upgrade"
			}
			args := append([]string{cmd}, repo...)
			args = append(args, tc.args...)
			code, out, errs := runPrebake(context.Background(), args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			if !strings.Contains(out, tc.out) {
				t.Errorf("stdout lacks %q:\n%s", tc.out, out)
			}
		})
	}
}
