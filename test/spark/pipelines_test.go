package spark

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// pipelinesLine is the Spark line whose spark-pipelines CLI is run.
const pipelinesLine = "4.3.0"

// TestPipelinesRewriteRealCLI: `prebake rewrite` of a spark-pipelines
// command line whose packages come from a properties file
// (spark.jars.packages), then the real spark-pipelines of Spark 4.3 runs
// the rewritten line: SparkPipelines hands spark-submit the resolved jar
// and the pipeline CLI its own arguments, and nothing is resolved at start
// (no Ivy output, no ~/.ivy2*). The pipeline CLI itself then needs
// pyspark's Connect client (grpcio), which the test machine's pyspark may
// lack: only what spark-submit did is checked.
func TestPipelinesRewriteRealCLI(t *testing.T) {
	testenv.RequireIT(t)
	sparkHome, pyPath := testenv.SparkHome(t, pipelinesLine)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "SPARK_HOME="+sparkHome, "PYTHONPATH="+pyPath,
		"SPARK_LOCAL_IP=127.0.0.1", "SPARK_CONF_DIR="+t.TempDir(),
		"PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=", "PREBAKE_CONFIG=", "PREBAKE_CACHE="+filepath.Join(home, "prebake-cache"))
	dir := t.TempDir()
	spec := filepath.Join(dir, "pipeline.yml")
	conf := filepath.Join(dir, "app.conf")
	writeFileT(t, spec, "name: tiny\nlibraries:\n  - glob:\n      include: transformations/**\n")
	writeFileT(t, conf, "spark.jars.packages=dev.prebake.demo:greeting:1.0\nspark.app.name=tiny-pipeline\n")
	line := []string{"spark-pipelines", "run", "--spec", spec, "--properties-file", conf, "--verbose", "--name", "tiny"}

	r := prebake(t, env, append([]string{"rewrite", "-o", "json", "--no-default-repositories", "--repositories", demoRepo(), "--"}, line...)...)
	if r.code != 0 {
		t.Fatalf("rewrite: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Args []string `json:"args"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("rewrite -o json: %v\n%s", err, r.stdout)
	}
	if len(out.Args) == 0 || out.Args[0] != "spark-pipelines" {
		t.Fatalf("rewritten line %q does not start with spark-pipelines", out.Args)
	}
	for _, want := range [][]string{{"run", "--spec", spec}, {"--name", "tiny"}} {
		if !containsSeq(out.Args, want) {
			t.Errorf("rewritten line %q lost the pipeline arguments %q", out.Args, want)
		}
	}
	jars := ""
	for i, a := range out.Args {
		if a == "--jars" && i+1 < len(out.Args) {
			jars = out.Args[i+1]
		}
	}
	if !strings.Contains(jars, "greeting-1.0.jar") {
		t.Fatalf("rewritten line %q has no --jars with the resolved greeting jar", out.Args)
	}

	cmd := exec.Command(filepath.Join(sparkHome, "bin", "spark-pipelines"), out.Args[1:]...)
	cmd.Env, cmd.Dir = env, dir
	b, _ := cmd.CombinedOutput() // the pipeline CLI may fail later without grpcio
	log := string(b)
	if !strings.Contains(log, "pipelines/cli.py") || !strings.Contains(log, "greeting-1.0.jar") {
		t.Fatalf("spark-submit (verbose) did not get the pipeline CLI and the resolved jar:\n%s", log)
	}
	if !strings.Contains(log, "spark.api.mode") {
		t.Errorf("not run through SparkPipelines (no spark.api.mode):\n%s", log)
	}
	noIvyWork(t, home, log)
}

func writeFileT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// containsSeq reports whether want appears in s as consecutive elements.
func containsSeq(s, want []string) bool {
	for i := 0; i+len(want) <= len(s); i++ {
		if slices.Equal(s[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
