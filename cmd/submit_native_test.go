package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

func TestSubmitNativeFlags(t *testing.T) {
	argv := []string{"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9", "--class", "org.example.Main", "local:///opt/app.jar"}
	tests := []struct {
		name   string
		flags  []string
		argv   []string
		code   int
		stdout string
		stderr string
	}{
		{"dry run prints the objects", []string{"--dry-run", "-o", "yaml", "--spark-version", "3.5.9"}, argv, 0,
			"kind: Pod", ""},
		{"version from an official image tag", []string{"--dry-run", "-o", "yaml"}, argv, 0, "spark-version: 3.5.9", ""},
		{"dry run needs the version", []string{"--dry-run", "-o", "yaml"},
			[]string{"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image=registry.example/jobs:7", "--class", "M", "local:///a.jar"},
			exitcode.Usage, "", "--spark-version"},
		{"dry run refuses uploads", []string{"--dry-run", "-o", "yaml", "--spark-version", "4.0.5"},
			[]string{"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image=i", "--class", "M", "app.jar"},
			exitcode.Usage, "", "use --submitter spark-submit"},
		{"yaml only with dry run", []string{"-o", "yaml"}, argv, exitcode.Usage, "", "only with --dry-run"},
		{"bad submitter", []string{"--submitter", "jvm", "--spark-version", "3.5.9"}, argv, exitcode.Usage, "", "must be native, spark-submit or auto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"submit"}, tt.flags...), tt.argv...)
			code := ExecuteContext(context.Background(), args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q (want %q), stderr %q (want %q)", stdout.String(), tt.stdout, stderr.String(), tt.stderr)
			}
		})
	}
}
