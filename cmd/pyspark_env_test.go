package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/submit"
)

// TestRewritePySparkEnv: with no spark-submit arguments (or --exec),
// rewrite rewrites $PYSPARK_SUBMIT_ARGS and prints an export line that a
// shell evals back to the new value (pyspark-shell last, no packages);
// -o json carries it under "env".
func TestRewritePySparkEnv(t *testing.T) {
	repo := s3FileRepo(t)
	cache := t.TempDir()
	t.Setenv("SPARK_HOME", "")
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	t.Setenv(submit.EnvPySparkSubmitArgs, `--master local[2] --name "it's mine" --packages com.example:lib-a:1.0 pyspark-shell`)
	flags := []string{"--no-default-repositories", "--repositories", repo, "--cache", cache}
	out, stderr, code := runCLI(t, append([]string{"rewrite"}, flags...)...)
	if code != 0 {
		t.Fatalf("rewrite: exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(out, "export PYSPARK_SUBMIT_ARGS=") {
		t.Fatalf("stdout %q: want an export line", out)
	}
	sh := exec.Command("bash", "-c", `eval "$1"; printf %s "$PYSPARK_SUBMIT_ARGS"`, "-", out)
	sh.Env = []string{"PATH=" + os.Getenv("PATH")}
	v, err := sh.Output()
	if err != nil {
		t.Fatalf("eval %q: %v", out, err)
	}
	got, err := submit.ShlexSplit(string(v))
	if err != nil {
		t.Fatal(err)
	}
	jars := filepath.Join(cache, "retrieve")
	if len(got) != 9 || got[8] != "pyspark-shell" || got[3] != "it's mine" || got[4] != "--jars" || !strings.HasPrefix(got[5], jars) || strings.Contains(string(v), "--packages") {
		t.Errorf("PYSPARK_SUBMIT_ARGS = %q, split %q", v, got)
	}

	out, stderr, code = runCLI(t, append([]string{"rewrite", "-o", "json"}, flags...)...)
	if code != 0 {
		t.Fatalf("rewrite -o json: exit %d: %s", code, stderr)
	}
	var r struct {
		Args []string
		Env  map[string]string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, r.Args); diff != "" {
		t.Errorf("json args differ from the exported value (-export +json):\n%s", diff)
	}
	if r.Env[submit.EnvPySparkSubmitArgs] != string(v) {
		t.Errorf("json env %q; want %q", r.Env, v)
	}

	// --exec checks the program's .py files: file:line and the jar list.
	app := filepath.Join(t.TempDir(), "app.py")
	if err := os.WriteFile(app, []byte("from pyspark.sql import SparkSession\n\nspark = SparkSession.builder.config(\"spark.jars.packages\", \"com.example:lib-a:1.0\").getOrCreate()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, append(append([]string{"rewrite", "--exec"}, flags...), "--", "python3", app)...)
	if code != 0 {
		t.Fatalf("rewrite --exec: exit %d: %s", code, stderr)
	}
	want := app + `:3: .config(...) sets spark.jars.packages=com.example:lib-a:1.0, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); delete that setting: the rewritten jar list already holds its jars; where the app runs without prebake, set .config("spark.jars", "` + got[5] + `") there instead`
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks\n%s\n:\n%s", want, stderr)
	}
}

// TestPySparkEnvUsage: the errors of the PYSPARK_SUBMIT_ARGS entry point
// are usage errors (64), as pyspark itself would fail on the same value.
func TestPySparkEnvUsage(t *testing.T) {
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	tests := []struct {
		name, env string
		args      []string
		want      string
	}{
		{name: "no pyspark-shell", env: "--packages a:b:1", args: []string{"rewrite", "--exec"}, want: "must end with pyspark-shell"},
		{name: "unterminated quote", env: "--name 'x pyspark-shell", args: []string{"rewrite"}, want: "no closing quotation"},
		{name: "cluster mode", env: "--master k8s://https://127.0.0.1:6443 --deploy-mode cluster pyspark-shell", args: []string{"rewrite"}, want: "not applicable to Spark shells"},
		{name: "nothing to rewrite", env: "", args: []string{"rewrite"}, want: "--exec for $PYSPARK_SUBMIT_ARGS"},
		{name: "submit --exec without a program", env: "pyspark-shell", args: []string{"submit", "--exec"}, want: "give the program to run"},
		{name: "--exec with --manifest", env: "", args: []string{"rewrite", "--exec", "--manifest", "x.yaml"}, want: "give one of them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(submit.EnvPySparkSubmitArgs, tt.env)
			_, stderr, code := runCLI(t, tt.args...)
			if code != 64 || !strings.Contains(stderr, tt.want) {
				t.Errorf("%q: exit %d, stderr %q; want 64 and %q", tt.args, code, stderr, tt.want)
			}
		})
	}
}

// TestExportLineHostile: the export line evals back to the value exactly,
// and nothing in it runs (audit 3 N9's rule for what prebake prints).
func TestExportLineHostile(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	for _, v := range []string{
		`--name 'a"$(touch ` + mark + `)` + "`touch " + mark + "`" + `\x' pyspark-shell`,
		`--conf "spark.x=\"\\$HOME" --name it's pyspark-shell`,
		"--name '!!' pyspark-shell",
	} {
		sh := exec.Command("bash", "-c", `eval "$1"; printf %s "$PYSPARK_SUBMIT_ARGS"`, "-", exportLine(submit.EnvPySparkSubmitArgs, v))
		sh.Env = []string{"PATH=" + os.Getenv("PATH")}
		got, err := sh.Output()
		if err != nil || string(got) != v {
			t.Errorf("eval of %q: %q (%v); want the value back", exportLine(submit.EnvPySparkSubmitArgs, v), got, err)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the export line ran a command")
	}
}
