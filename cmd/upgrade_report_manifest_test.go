package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeReportManifest: prebake upgrade-report --manifest reads the
// job from a SparkApplication (its packages, spec.sparkVersion and image)
// over the file:// fixture testdata/upgrade-repo; a missing file is 66, a
// file with no SparkApplication 65.
func TestUpgradeReportManifest(t *testing.T) {
	root, tmp := isolatedCLI(t)
	repoURL := "file://" + filepath.Join(root, "testdata", "upgrade-repo") + "/"
	flags := []string{"--no-default-repositories", "--cache", filepath.Join(tmp, "cache")}
	app := filepath.Join(tmp, "app.yaml")
	if err := os.WriteFile(app, []byte(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: events}
spec:
  image: apache/spark:3.5.1
  sparkVersion: 3.5.1
  deps:
    packages: [org.apache.spark:spark-avro_2.12:3.5.1]
    repositories: [`+repoURL+`]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(tmp, "none.yaml")
	if err := os.WriteFile(none, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout (or stderr for a failure)
	}{
		{"report", []string{"--to", "4.0", "--manifest", app}, 0, "Current image: apache/spark:3.5.1"},
		{"json", []string{"--to", "4.0", "--manifest", app, "-o", "json"}, 0, `"image":"apache/spark:3.5.1"`},
		{"missing file", []string{"--to", "4.0", "--manifest", filepath.Join(tmp, "nope.yaml")}, 66, "--manifest"},
		{"no application", []string{"--to", "4.0", "--manifest", none}, 65, "no SparkApplication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runPrebake(context.Background(), append(append([]string{"upgrade-report"}, flags...), tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			if !strings.Contains(out+errs, tc.out) {
				t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", tc.out, out, errs)
			}
			if tc.code == 0 && !strings.Contains(out, "org.apache.spark:spark-avro_2.13:4.0.1") {
				t.Errorf("stdout lacks the target's spark-avro:\n%s", out)
			}
		})
	}
}
