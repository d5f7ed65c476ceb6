package spark

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/pyindex"
	"github.com/prebake/prebake/resolver/repo"
)

// TestLocalPyDeps (issue 44, the Must's local mode): prebake resolve (both
// halves, through the counting proxies), then `prebake submit --lock
// --frozen` runs app.py with the real spark-submit in local mode: prebake
// unpacks the wheels' site-packages and puts it on PYTHONPATH, so the
// driver and the UDF's Python workers import the pinned packages (versions
// no interpreter of the machine has), spark-avro is on the classpath, Spark
// does no Ivy work, and neither index had a request after prebake resolve.
func TestLocalPyDeps(t *testing.T) {
	testenv.RequireIT(t)
	t.Parallel() // a local JVM: overlaps the other parallel tests
	env, home := sparkEnv(t)
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		testenv.Skip(t, "no route to Maven Central: "+err.Error())
	}
	maven := testenv.CountingProxy(t, central)
	ix := pyindex.Start(t)
	env = append(env, ix.Env(t, t.TempDir())...)
	dir := t.TempDir()
	cache, lockFile := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
	reqs, err := filepath.Abs(pyDepsReqs)
	if err != nil {
		t.Fatal(err)
	}
	app, err := filepath.Abs(pyDepsApp)
	if err != nil {
		t.Fatal(err)
	}
	pyN, mvN := resolvePyDeps(t, env, ix, maven, cache, lockFile, reqs)

	start := time.Now()
	r := prebakeWithin(t, env, 8*time.Minute, "submit", "-o", "json", "--cache", cache, "--lock", lockFile, "--frozen",
		// No target flags: the driver runs here, so submit reads the
		// target from the python3 that runs it (this machine's is 3.11 on
		// glibc 2.36, the lock's, or --frozen fails).
		"--py-requirements", reqs,
		"--no-default-repositories", "--repositories", maven.URL, "--",
		"--master", "local[2]", "--conf", "spark.ui.enabled=false", "--name", "pydeps-local",
		"--packages", avroPackage, app, filepath.Join(dir, "out.avro"))
	var res struct {
		Backend, Source, Reason string
		DriverExitCode          *int
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil {
		t.Fatalf("exit %d (%v), want 0\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	if res.Backend != "spark-submit" || res.Source != "driver" || res.DriverExitCode == nil || *res.DriverExitCode != 0 {
		t.Errorf("result %+v", res)
	}
	// With -o json the app's own stdout goes to stderr.
	machine := machinePythonPrefixes(t)
	parsePyDeps(t, r.stderr).check(t, r.stderr, false, func(p string) bool {
		for _, m := range machine {
			if strings.HasPrefix(p, m+"/") {
				return false
			}
		}
		return strings.HasPrefix(p, cache+"/") // prebake unpacks the wheels under its cache
	})
	noIvyWork(t, home, r.stderr)
	if extra := ix.Since(pyN); len(extra) > 0 {
		t.Errorf("%d index requests after prebake resolve: %v", len(extra), extra)
	}
	if n := maven.Count(); n != mvN {
		t.Errorf("%d Maven requests after prebake resolve: %v", n-mvN, maven.Requests()[mvN:])
	}
	t.Logf("local mode: submit %s; index proxy %d requests, Maven proxy %d, all prebake resolve's", time.Since(start).Round(100*time.Millisecond), ix.Count(), maven.Count())
}

// machinePythonPrefixes are the installation prefixes of the machine's
// python3 (where its own site-packages live): a module of the job must not
// come from there.
func machinePythonPrefixes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.prefix); print(sys.base_prefix)").Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	ps := strings.Fields(string(out))
	return append(ps, "/usr/lib/python3", "/usr/local/lib/python3")
}
