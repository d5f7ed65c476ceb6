package examples

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// TestMain removes the CLI testenv.Prebake built.
func TestMain(m *testing.M) { testenv.Main(m) }

// TestExampleAirflowDAGRuns runs examples/airflow/prebake_spark_submit_dag.py
// with the real Airflow (`airflow dags test`, hack/infra.d/70-airflow.sh)
// and the real Spark (pyspark 3.5): its BashOperator runs `prebake submit`,
// and Airflow's own SparkSubmitOperator, unchanged, runs prebake installed
// as spark-submit. Both run testdata/spark-demo/app.py in local mode, which
// calls a class only the package dev.prebake.demo:greeting:1.0 provides;
// prebake resolves it from testdata/spark-demo/repo (prebake.yaml), and
// Spark does no Ivy work (no Ivy directory appears in HOME).
func TestExampleAirflowDAGRuns(t *testing.T) {
	testenv.RequireIT(t)
	airflowBin := testenv.Airflow(t)
	sparkHome, pyPath := testenv.SparkHome(t, "3.5.9")
	r := root(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testenv.Prebake(t), filepath.Join(bin, "prebake")); err != nil {
		t.Fatal(err)
	}
	// The documented install: prebake as the spark-submit on PATH.
	if err := os.Symlink("prebake", filepath.Join(bin, "spark-submit")); err != nil {
		t.Fatal(err)
	}
	dags := filepath.Join(tmp, "dags")
	if err := os.MkdirAll(dags, 0o755); err != nil {
		t.Fatal(err)
	}
	dag, err := os.ReadFile(filepath.Join(r, "examples", "airflow", "prebake_spark_submit_dag.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dags, "prebake_spark_submit_dag.py"), dag, 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tmp, "home")
	cfg := filepath.Join(tmp, "prebake.yaml")
	yaml := "cache: " + filepath.Join(tmp, "cache") + "\n" +
		"repositories: [file://" + filepath.Join(r, "testdata", "spark-demo", "repo") + "/]\n" +
		"noDefaultRepositories: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"HOME="+home,
		"PATH="+bin+string(os.PathListSeparator)+airflowBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SPARK_HOME="+sparkHome, "PYTHONPATH="+pyPath, "SPARK_LOCAL_IP=127.0.0.1",
		"AIRFLOW_HOME="+filepath.Join(tmp, "airflow"),
		"AIRFLOW__CORE__DAGS_FOLDER="+dags,
		"AIRFLOW__CORE__LOAD_EXAMPLES=False",
		`AIRFLOW_CONN_SPARK_LOCAL={"conn_type": "spark", "host": "local[2]"}`,
		"PREBAKE_CONFIG="+cfg, "PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=",
		"PREBAKE_EXAMPLE_APP="+filepath.Join(r, "testdata", "spark-demo", "app.py"),
		"PREBAKE_EXAMPLE_PACKAGES=dev.prebake.demo:greeting:1.0",
	)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(airflowBin, "airflow"), args...)
		cmd.Dir = tmp
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("airflow %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		t.Logf("airflow %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
		return out.String()
	}
	run("db", "migrate")
	out := run("dags", "test", "spark_local_prebake")
	if n := strings.Count(out, "GREETING: hello spark from a jar that prebake resolved (3 rows)"); n != 2 {
		t.Errorf("want the job's line from both tasks, got it %d times:\n%s", n, out)
	}
	for _, task := range []string{"prebake_submit", "spark_submit_operator"} {
		if !strings.Contains(out, task) {
			t.Errorf("no %s in the run:\n%s", task, out)
		}
	}
	if strings.Contains(out, "resolving dependencies") || strings.Contains(out, "Ivy Default Cache") {
		t.Errorf("Spark resolved packages at run time:\n%s", out)
	}
	for _, d := range []string{".ivy2", ".ivy2.5.2"} {
		if _, err := os.Stat(filepath.Join(home, d)); err == nil {
			t.Errorf("Spark created ~/%s", d)
		}
	}
	// Review 3, finding 6: the BashOperator's XCom (stdout's last line) of
	// `prebake submit -o json` was "}"; it is the whole result now.
	query := `import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select value from xcom where task_id='prebake_submit' and key='return_value'").fetchall()
print(rows[-1][0] if rows else "")`
	py := exec.Command(filepath.Join(airflowBin, "python"), "-c", query, filepath.Join(tmp, "airflow", "airflow.db"))
	xcom, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("reading the XCom: %v\n%s", err, xcom)
	}
	var res struct {
		ExitCode *int   `json:"exitCode"`
		Source   string `json:"source"`
		Backend  string `json:"backend"`
	}
	// The column holds the XCom value JSON-encoded: the line, a JSON string.
	var line string
	if err := json.Unmarshal(bytes.TrimSpace(xcom), &line); err != nil {
		line = string(bytes.TrimSpace(xcom))
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil || res.ExitCode == nil || *res.ExitCode != 0 || res.Source != "driver" || res.Backend != "spark-submit" {
		t.Errorf("prebake_submit XCom is not the result object: %s (%v)", xcom, err)
	}
}
