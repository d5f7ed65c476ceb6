// Package testenv gates integration tests and finds the real servers they
// start. The tiers: unit tests always run; server tests (nginx, registry,
// versitygw, kube-apiserver) run when PREBAKE_IT=1; JVM tests (a real
// spark-submit or Spark master, Airflow, real pods on the node) run when
// PREBAKE_JVM=1 too. With CI=true a skip in a tier that was asked for is a
// failure; a tier that was not asked for skips.
package testenv

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Integration reports whether integration tests are enabled.
func Integration() bool { return os.Getenv("PREBAKE_IT") == "1" }

// InCI reports whether we run under CI, where skips are failures.
func InCI() bool { return os.Getenv("CI") == "true" }

// RequireIT skips t unless PREBAKE_IT=1. Under CI=true it fails instead.
func RequireIT(t testing.TB) {
	t.Helper()
	if !Integration() {
		Skip(t, "integration test: set PREBAKE_IT=1 (make test does) to run it against real servers")
	}
}

// JVM reports whether the JVM tier is enabled (PREBAKE_IT=1 and
// PREBAKE_JVM=1; make test sets both, make test-fast only the first).
func JVM() bool { return Integration() && os.Getenv("PREBAKE_JVM") == "1" }

// NeedJVM skips t unless the JVM tier runs: it calls RequireIT, then skips
// (also under CI=true: the tier was not asked for) unless PREBAKE_JVM=1.
// SparkHome, Airflow and the real node (cluster.Start) call it.
func NeedJVM(t testing.TB) {
	t.Helper()
	RequireIT(t)
	if !JVM() {
		t.Skip("JVM test (spark-submit, Spark, Airflow or real pods): set PREBAKE_JVM=1 as well (make test does; make test-fast does not)")
	}
}

// Skip skips t with msg, or fails it under CI=true.
func Skip(t testing.TB, msg string) {
	t.Helper()
	if InCI() {
		t.Fatalf("skip is a failure under CI=true: %s", msg)
	}
	t.Skip(msg)
}

// CacheDir is where hack/infra.sh caches binaries built from source.
func CacheDir() string {
	if d := os.Getenv("PREBAKE_CI_CACHE"); d != "" {
		return d
	}
	return "/var/cache/prebake-ci"
}

// Binary finds a server binary: $envVar, then PATH, then the given paths
// relative to CacheDir(). It skips (fails under CI) when none exists.
func Binary(t testing.TB, name, envVar string, cachePaths ...string) string {
	t.Helper()
	p, err := FindBinary(name, envVar, cachePaths...)
	if err != nil {
		Skip(t, err.Error())
	}
	return p
}

// FindBinary is Binary without a test (a launcher outside one): an error
// when none exists.
func FindBinary(name, envVar string, cachePaths ...string) (string, error) {
	if envVar != "" {
		if p := os.Getenv(envVar); p != "" {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, c := range cachePaths {
		p := filepath.Join(CacheDir(), c)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New(name + " not installed: run hack/infra.sh")
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1: the one
// free-port helper of the test servers' launchers (a port may be taken
// again between this call and the server's listen; the launchers retry or
// fail with the server's log).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	seen := map[int]bool{}
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// SharedDir returns ../shared (the corpus and oracle beside the clone), or
// skips (fails under CI) when it is absent.
func SharedDir(t testing.TB, repoRoot string) string {
	t.Helper()
	d := filepath.Join(repoRoot, "..", "shared")
	if _, err := os.Stat(filepath.Join(d, "corpus")); err != nil {
		Skip(t, "../shared/corpus not found beside the repository")
	}
	return d
}

// SparkVersions are the pyspark distributions the Spark tests run against;
// hack/infra.d/60-spark.sh installs them, and the CI lines of SparkLines.
var SparkVersions = []string{"3.5.9", "4.0.5"}

// SparkLine is one Spark release line of the parity suite (hack/central):
// the newest patch on PyPI of the line, and what its jars say.
type SparkLine struct {
	Name    string // "3.4", "3.5-early" (the 3.5 patches with Ivy 2.5.1), "4.3"
	Version string // the pyspark version ($PREBAKE_CI_CACHE/pyspark-<Version>)
	Scala   string // its Scala binary version (jars/scala-library-*.jar)
	Ivy     string // its Ivy (jars/ivy-*.jar): 2.5.1 loses POM dependencies that differ only by classifier (IVY-1642)
	// CI lines are checked live by .ci/run (hack/infra.d/60-spark.sh
	// installs them); make parity-lines installs the others on demand.
	CI bool
}

// SparkLines are the lines hack/central checks, oldest first. 3.5.0 to
// 3.5.8 ship Ivy 2.5.1, 3.5.9 Ivy 2.5.3 (spark-parent's ivy.version).
var SparkLines = []SparkLine{
	{Name: "3.4", Version: "3.4.4", Scala: "2.12", Ivy: "2.5.1", CI: true},
	{Name: "3.5-early", Version: "3.5.0", Scala: "2.12", Ivy: "2.5.1"},
	{Name: "3.5", Version: "3.5.9", Scala: "2.12", Ivy: "2.5.3", CI: true},
	{Name: "4.0", Version: "4.0.5", Scala: "2.13", Ivy: "2.5.3", CI: true},
	{Name: "4.1", Version: "4.1.4", Scala: "2.13", Ivy: "2.5.3"},
	{Name: "4.2", Version: "4.2.1", Scala: "2.13", Ivy: "2.5.3"},
	{Name: "4.3", Version: "4.3.0", Scala: "2.13", Ivy: "2.5.3", CI: true},
}

// SparkHome returns SPARK_HOME of the pyspark distribution installed
// under CacheDir()/pyspark-<version> (hack/infra.d/60-spark.sh installs
// CISparkVersions), and the directory to put on PYTHONPATH for its Python
// apps. It is a JVM test's (NeedJVM). It skips (fails under CI) when that
// version is not installed.
func SparkHome(t testing.TB, version string) (sparkHome, pythonPath string) {
	t.Helper()
	NeedJVM(t)
	home, dir, ok := sparkInstalled(version)
	if !ok {
		Skip(t, "pyspark "+version+" not installed under "+CacheDir()+": run hack/infra.sh (PREBAKE_SPARK_VERSIONS="+version+" for one not installed by default)")
	}
	return home, dir
}

// sparkInstalled reports whether pyspark version is installed (its
// bin/spark-submit exists), with its SPARK_HOME and PYTHONPATH directory.
func sparkInstalled(version string) (sparkHome, pythonPath string, ok bool) {
	dir := filepath.Join(CacheDir(), "pyspark-"+version)
	home := filepath.Join(dir, "pyspark")
	if _, err := os.Stat(filepath.Join(home, "bin", "spark-submit")); err != nil {
		return "", "", false
	}
	return home, dir, true
}

// InstalledSparkHome is SPARK_HOME of the installed pyspark version (ok
// false when it is not installed), for a launcher outside a test.
func InstalledSparkHome(version string) (sparkHome string, ok bool) {
	home, _, ok := sparkInstalled(version)
	return home, ok
}
