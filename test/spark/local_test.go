package spark

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver/repo"
)

// avroApp writes three rows as Avro and reads them back: it needs
// spark-avro, which is not in Spark's distribution.
const avroApp = `import sys
from pyspark.sql import SparkSession
out = sys.argv[1]
spark = SparkSession.builder.appName("prebake-avro").getOrCreate()
spark.range(3).selectExpr("id", "concat('row-', id) AS name").write.format("avro").save(out)
rows = spark.read.format("avro").load(out).orderBy("id").collect()
print("AVRO ROWS: %s" % ",".join(r["name"] for r in rows), flush=True)
spark.stop()
`

// TestLocalAvroFromCentral: `prebake submit -- --master local[2] --packages
// spark-avro app.py` resolves spark-avro from Maven Central (as this machine
// reaches it), and the real spark-submit runs the rewritten argv: the app
// writes and reads Avro, and Spark does no Ivy work.
func TestLocalAvroFromCentral(t *testing.T) {
	testenv.RequireIT(t)
	env, home := sparkEnv(t)
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		testenv.Skip(t, "no route to Maven Central: "+err.Error())
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "avro_app.py")
	if err := os.WriteFile(app, []byte(avroApp), 0o644); err != nil {
		t.Fatal(err)
	}
	r := prebake(t, env, "submit", "-o", "json", "--no-default-repositories", "--repositories", central, "--",
		"--master", "local[2]", "--conf", "spark.ui.enabled=false",
		"--packages", "org.apache.spark:spark-avro_2.12:"+sparkVersion, app, filepath.Join(dir, "out.avro"))
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		Backend, Source, Reason string
		ExitCode                int
		DriverExitCode          *int
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("-o json: stdout is not the result object: %v\n%s", err, r.stdout)
	}
	if res.Backend != "spark-submit" || res.Source != "driver" || res.Reason != "Completed" || res.DriverExitCode == nil || *res.DriverExitCode != 0 {
		t.Errorf("result %+v", res)
	}
	// With -o json the app's own stdout goes to stderr.
	if !strings.Contains(r.stderr, "AVRO ROWS: row-0,row-1,row-2") {
		t.Errorf("the app did not write and read Avro:\n%s", r.stderr)
	}
	noIvyWork(t, home, r.stderr)
}

// TestLocalExitCodePassedThrough: an app that exits 3 (after its job, which
// needs the package) makes prebake exit 3; the app's stdout is prebake's.
// Every installed Spark line runs it (3.5 and 4.0: Spark 4's Ivy directory
// is ~/.ivy2.5.2).
func TestLocalExitCodePassedThrough(t *testing.T) {
	testenv.RequireIT(t)
	for _, v := range testenv.SparkVersions {
		t.Run(v, func(t *testing.T) {
			env, home := sparkEnvFor(t, v)
			r := prebake(t, env, "submit", "--no-default-repositories", "--repositories", demoRepo(), "--",
				"--master", "local[1]", "--conf", "spark.ui.enabled=false",
				"--packages", "dev.prebake.demo:greeting:1.0", filepath.Join(repoRoot, "testdata", "spark-demo", "app.py"), "3")
			if r.code != 3 {
				t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "GREETING: hello spark from a jar that prebake resolved (3 rows)") {
				t.Errorf("the job's line is not on stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			noIvyWork(t, home, r.stderr)
		})
	}
}
