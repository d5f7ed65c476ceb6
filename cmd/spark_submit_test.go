package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
)

// fakeSparkHome is a SPARK_HOME whose bin/spark-submit records its argv and
// exits with code (the real one runs in test/spark).
func fakeSparkHome(t *testing.T, code string) (home, argsFile string) {
	t.Helper()
	home = t.TempDir()
	argsFile = filepath.Join(home, "args")
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\necho real-spark-submit\nexit " + code + "\n"
	if err := os.WriteFile(filepath.Join(home, "bin", "spark-submit"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return home, argsFile
}

// sparkDemoLink isolates a spark-submit link run: the working directory
// is a temp dir whose prebake.yaml (as $PREBAKE_CONFIG) points at the
// spark-demo repository only, and $PREBAKE_SPARK_SUBMIT is unset.
func sparkDemoLink(t *testing.T) (root, tmp string) {
	t.Helper()
	root, tmp = isolatedCLI(t)
	t.Chdir(tmp)
	repo := "file://" + filepath.Join(root, "testdata", "spark-demo", "repo") + "/"
	cfg := filepath.Join(tmp, "prebake.yaml")
	if err := os.WriteFile(cfg, []byte("cache: "+filepath.Join(tmp, "cache")+"\nrepositories: ["+repo+"]\nnoDefaultRepositories: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PREBAKE_CONFIG", cfg)
	t.Setenv("PREBAKE_SPARK_SUBMIT", "")
	return root, tmp
}

func TestExecuteAsSparkSubmit(t *testing.T) {
	sparkDemoLink(t)
	tests := []struct {
		name     string
		code     string
		args     []string
		want     int
		wantArgs func(got []string) string // "" when fine
	}{
		{"--version goes to the real one unchanged", "0", []string{"--version"}, 0, func(got []string) string {
			return cmp.Diff([]string{"--version"}, got)
		}},
		{"--status keeps the real one's exit code", "7", []string{"--master", "spark://m:6066", "--status", "driver-1"}, 7, func(got []string) string {
			return cmp.Diff([]string{"--master", "spark://m:6066", "--status", "driver-1"}, got)
		}},
		{"a local submission is resolved and rewritten", "3", []string{"--master", "local[1]", "--packages", "dev.prebake.demo:greeting:1.0", "app.py", "--packages", "x"}, 3, func(got []string) string {
			j := strings.Join(got, " ")
			if strings.Contains(j, "--packages dev.prebake") || !strings.Contains(j, "dev.prebake.demo_greeting-1.0.jar") || !strings.HasSuffix(j, "app.py --packages x") {
				return "not rewritten: " + j
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, argsFile := fakeSparkHome(t, tt.code)
			t.Setenv("SPARK_HOME", home)
			var stdout, stderr bytes.Buffer
			if code := ExecuteAsSparkSubmit(tt.args, &stdout, &stderr); code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", code, tt.want, stderr.String())
			}
			data, err := os.ReadFile(argsFile)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.wantArgs(strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")); msg != "" {
				t.Error(msg)
			}
			if !strings.Contains(stdout.String(), "real-spark-submit") {
				t.Errorf("the real spark-submit's stdout was not passed through: %q", stdout.String())
			}
		})
	}
	t.Run("no real spark-submit", func(t *testing.T) {
		t.Setenv("SPARK_HOME", "")
		var stdout, stderr bytes.Buffer
		if code := ExecuteAsSparkSubmit([]string{"--master", "local", "app.py"}, &stdout, &stderr); code != exitcode.Usage || !strings.Contains(stderr.String(), "SPARK_HOME") {
			t.Errorf("exit %d, want 64 naming SPARK_HOME\n%s", code, stderr.String())
		}
	})
}
