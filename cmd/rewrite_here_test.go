package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/submit"
)

// TestRewriteIgnoresWorkerStoreLocally reproduces MEDIUM 5 of review 4: with
// a worker-wide $PREBAKE_STORE (an unreachable S3), `prebake rewrite` for a
// local master asked the store and failed (exit 77), where submit ignores
// it for a driver that runs here; `eval "$(prebake rewrite)"` in a notebook
// is that path. rewrite now ignores it too (a -v line), and prints the
// local jars; for a cluster master the store is still used.
func TestRewriteIgnoresWorkerStoreLocally(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	repo := "file://" + filepath.Join(root, "testdata", "spark-demo", "repo") + "/"
	t.Setenv("PREBAKE_STORE", "s3://nobucket/x")
	t.Setenv("PREBAKE_ENDPOINT", "http://127.0.0.1:9")
	t.Setenv("PREBAKE_REPOSITORIES", repo)
	t.Setenv("PREBAKE_NO_DEFAULT_REPOSITORIES", "true")
	line := []string{"--master", "local[1]", "--packages", "dev.prebake.demo:greeting:1.0", "app.py"}
	code, out, errs := runPrebake(context.Background(), append([]string{"rewrite", "-v", "--"}, line...)...)
	if code != 0 || !strings.Contains(out, "dev.prebake.demo_greeting-1.0.jar") || strings.Contains(out, "s3") {
		t.Fatalf("rewrite: exit %d\n%s\n%s", code, out, errs)
	}
	if want := "s3://nobucket/x ($PREBAKE_STORE) ignored: master local[1] runs the driver here"; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
	// The PySpark path: eval "$(prebake rewrite)".
	t.Setenv(submit.EnvPySparkSubmitArgs, strings.Join(line[:4], " ")+" pyspark-shell")
	code, out, errs = runPrebake(context.Background(), "rewrite", "-q")
	if code != 0 || !strings.HasPrefix(out, "export PYSPARK_SUBMIT_ARGS=") || !strings.Contains(out, "dev.prebake.demo_greeting-1.0.jar") {
		t.Errorf("rewrite of $PYSPARK_SUBMIT_ARGS: exit %d\n%s\n%s", code, out, errs)
	}
	if errs != "" {
		t.Errorf("-q: stderr %q", errs)
	}
	// A cluster driver reads the store: it is asked (an empty one has no
	// set yet).
	t.Setenv("PREBAKE_STORE", "file://"+filepath.Join(tmp, "store"))
	t.Setenv("PREBAKE_ENDPOINT", "")
	code, out, errs = runPrebake(context.Background(), "rewrite", "--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster",
		"--packages", "dev.prebake.demo:greeting:1.0", "local:///opt/app.py")
	if code == 0 || !strings.Contains(errs, "bake s3") {
		t.Errorf("rewrite for a cluster master with an empty store: exit %d\n%s\n%s", code, out, errs)
	}
}
