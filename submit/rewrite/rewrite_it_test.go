package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

// TestMain removes the CLI testenv.Prebake built.
func TestMain(m *testing.M) { testenv.Main(m) }

// TestRewriteIT runs `prebake rewrite` end to end: the packages in the argv
// are resolved from a real HTTP repository (nginx), retrieved, and the
// rewritten command line carries the local jars and no packages source.
func TestRewriteIT(t *testing.T) {
	testenv.RequireIT(t)
	repo, err := filepath.Abs(filepath.Join("testdata", "rewrite", "m2"))
	if err != nil {
		t.Fatal(err)
	}
	url := mavenhttp.StartNginx(t, repo, "", "").URL
	bin := testenv.Prebake(t)
	cache := t.TempDir()
	run := func(extra ...string) (*Result, string, error) {
		args := append([]string{"rewrite", "--no-default-repositories", "--cache", cache, "-o", "json"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SPARK_CONF_DIR="+t.TempDir(), "SPARK_HOME=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return nil, stderr.String(), err
		}
		var r Result
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("json: %v\n%s", err, stdout.String())
		}
		return &r, stderr.String(), nil
	}
	r, stderr, err := run("--", "--master", "k8s://https://k8s.example:6443", "--deploy-mode", "client",
		"--packages", "com.example:hello:1.0", "--repositories", url, "--class", "com.example.Main", "app.jar", "--packages", "kept")
	if err != nil {
		t.Fatalf("prebake rewrite: %v\n%s", err, stderr)
	}
	s, err := submit.LoadSubmission(r.Args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left := s.PackagesSources(); len(left) > 0 {
		t.Errorf("packages left: %v", left)
	}
	jars, ok := s.Argv.Flag("--jars")
	if !ok {
		t.Fatalf("no --jars in %q", r.Args)
	}
	var names []string
	for _, p := range strings.Split(jars, ",") {
		names = append(names, filepath.Base(p))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("retrieved jar: %v", err)
		}
		src := map[string]string{
			"com.example_hello-1.0.jar": "com/example/hello/1.0/hello-1.0.jar",
			"com.example_dep-2.0.jar":   "com/example/dep/2.0/dep-2.0.jar",
		}[filepath.Base(p)]
		want, err := os.ReadFile(filepath.Join(repo, src))
		if err != nil || !bytes.Equal(data, want) {
			t.Errorf("%s: content differs from the repository's %s (%v)", p, src, err)
		}
	}
	if got, want := strings.Join(names, ","), "com.example_dep-2.0.jar,com.example_hello-1.0.jar"; got != want {
		t.Errorf("jars = %s, want %s", got, want)
	}
	if got := r.Args[len(r.Args)-2:]; got[0] != "--packages" || got[1] != "kept" {
		t.Errorf("app args changed: %q", r.Args)
	}
	// Cluster mode without an image or a store is refused (exit 64).
	_, _, err = run("--", "--master", "k8s://https://k8s.example:6443", "--deploy-mode", "cluster",
		"--packages", "com.example:hello:1.0", "--repositories", url, "app.jar")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 64 {
		t.Errorf("cluster mode without --image-from/--store: err %v, want exit 64", err)
	}
}
