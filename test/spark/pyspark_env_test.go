package spark

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// demoPySparkArgs is a $PYSPARK_SUBMIT_ARGS that needs the demo package.
const demoPySparkArgs = "--master local[1] --conf spark.ui.enabled=false --name 'prebake env demo' --packages dev.prebake.demo:greeting:1.0 pyspark-shell"

// TestPySparkSubmitArgsExec: `prebake submit --exec -- python3 app.py 3`
// with $PYSPARK_SUBMIT_ARGS asking for --packages: prebake resolves the
// package, runs the real Python app (pyspark from PYTHONPATH starts its
// own JVM with the rewritten value), the packaged class works, the app's
// exit code 3 is prebake's, and the JVM did no Ivy work.
func TestPySparkSubmitArgsExec(t *testing.T) {
	testenv.RequireIT(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Skip(t, "no python3")
	}
	for _, v := range testenv.SparkVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel() // one local JVM each: the versions overlap
			env, home := sparkEnvFor(t, v)
			env = append(env, "PYSPARK_SUBMIT_ARGS="+demoPySparkArgs)
			r := prebake(t, env, "submit", "-o", "json", "--no-default-repositories", "--repositories", demoRepo(), "--exec", "--",
				py, filepath.Join(repoRoot, "testdata", "spark-demo", "app.py"), "3")
			if r.code != 3 {
				t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			var res struct {
				Backend, Source, Reason string
				DriverExitCode          *int
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("-o json: %v\n%s", err, r.stdout)
			}
			if res.Backend != "exec" || res.Source != "driver" || res.DriverExitCode == nil || *res.DriverExitCode != 3 {
				t.Errorf("result %+v", res)
			}
			if !strings.Contains(r.stderr, "GREETING: hello spark from a jar that prebake resolved") {
				t.Errorf("the packaged class did not run:\n%s", r.stderr)
			}
			noIvyWork(t, home, r.stderr)
		})
	}
}

// TestPySparkSubmitArgsRewriteEval: `eval "$(prebake rewrite --exec)"`
// exports the rewritten $PYSPARK_SUBMIT_ARGS; the real app run with it
// (python3 app.py, no prebake in between) finds the packaged class, Spark
// resolves nothing, and pyspark's shlex reads the value back with its
// quoted --name and pyspark-shell last.
func TestPySparkSubmitArgsRewriteEval(t *testing.T) {
	testenv.RequireIT(t)
	t.Parallel() // a local JVM: overlaps the other parallel tests
	env, home := sparkEnv(t)
	env = append(env, "PYSPARK_SUBMIT_ARGS="+demoPySparkArgs, "PREBAKE_BIN="+prebakeBin, "DEMO_REPO="+demoRepo(),
		"APP="+filepath.Join(repoRoot, "testdata", "spark-demo", "app.py"))
	script := `set -e
eval "$("$PREBAKE_BIN" rewrite --no-default-repositories --repositories "$DEMO_REPO" --exec -- python3 "$APP")"
python3 -c 'import os, shlex; a = shlex.split(os.environ["PYSPARK_SUBMIT_ARGS"]); print("ARGS:", a[-1], "--packages" in a, a[a.index("--name") + 1])'
python3 "$APP"`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"ARGS: pyspark-shell False prebake env demo", "GREETING: hello spark from a jar that prebake resolved"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	noIvyWork(t, home, string(out))
	if _, err := os.Stat(filepath.Join(home, ".ivy2")); err == nil {
		t.Error("~/.ivy2 exists")
	}
}
