package spark

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// TestLocalNoMaster is review 3's finding 4 on the real Spark: a
// submission without --master was exit 64; it now runs on spark-submit's
// default, local[*], and the driver's exit code passes through.
func TestLocalNoMaster(t *testing.T) {
	testenv.RequireIT(t)
	env, home := sparkEnv(t)
	// No master anywhere: not even an empty $MASTER, which spark-submit
	// would take as the master "".
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "MASTER=") })
	r := prebake(t, env, "submit", "--no-default-repositories", "--repositories", demoRepo(), "--",
		"--conf", "spark.ui.enabled=false", "--packages", "dev.prebake.demo:greeting:1.0",
		filepath.Join(repoRoot, "testdata", "spark-demo", "app.py"), "3")
	if r.code != 3 || !strings.Contains(r.stdout, "GREETING: hello spark from a jar that prebake resolved (3 rows)") {
		t.Fatalf("exit %d, want 3 and the job's line\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	noIvyWork(t, home, r.stderr)
}

// TestLocalScalaMismatch is finding 2 in local mode: the resolved jars are
// checked against the real $SPARK_HOME/jars (Spark 3.5 is Scala 2.12, 4.0
// is 2.13). The mismatch is a warning that survives -q; with --strict it
// is exit 65 and spark-submit does not run.
func TestLocalScalaMismatch(t *testing.T) {
	testenv.RequireIT(t)
	for v, other := range map[string]string{"3.5.9": "2.13", "4.0.5": "2.12"} {
		t.Run(v, func(t *testing.T) {
			env, _ := sparkEnvFor(t, v)
			repo := scalaRepo(t, other)
			coord := "com.example:foo_" + other + ":1.0"
			args := []string{"submit", "-q", "--no-default-repositories", "--repositories", repo, "--",
				"--master", "local[1]", "--conf", "spark.ui.enabled=false", "--packages", coord + ",dev.prebake.demo:greeting:1.0",
				"--repositories", demoRepo(), filepath.Join(repoRoot, "testdata", "spark-demo", "app.py")}
			want := coord + " is built for Scala " + other + " but the local Spark has Scala "
			r := prebake(t, env, args...)
			if r.code != 0 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr lacks %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
			}
			strict := append([]string{"submit", "--strict"}, args[1:]...)
			r = prebake(t, env, strict...)
			if r.code != 65 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "nothing was run") || strings.Contains(r.stdout, "GREETING") {
				t.Errorf("--strict: exit %d, want 65\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// scalaRepo writes a file:// Maven repository holding com.example:foo_S:1.0
// (an empty but valid jar built for Scala S) and returns its URL.
func scalaRepo(t *testing.T, scala string) string {
	t.Helper()
	dir := t.TempDir()
	name := "foo_" + scala
	mod := filepath.Join(dir, "com", "example", name, "1.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	pom := `<project><modelVersion>4.0.0</modelVersion><groupId>com.example</groupId><artifactId>` + name + `</artifactId><version>1.0</version></project>`
	if err := os.WriteFile(filepath.Join(mod, name+"-1.0.pom"), []byte(pom), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mod, name+"-1.0.jar"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	if _, err := zw.Create("META-INF/MANIFEST.MF"); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return "file://" + dir + "/"
}
