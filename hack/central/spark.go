package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// sparkHome is SPARK_HOME of the pinned pyspark of a Spark line and the
// directory to put on PYTHONPATH.
func sparkHome(line string) (home, pythonPath string, err error) {
	dir := filepath.Join(testenv.CacheDir(), "pyspark-"+sparkLines[line].Version)
	home = filepath.Join(dir, "pyspark")
	if _, err := os.Stat(filepath.Join(home, "bin", "spark-submit")); err != nil {
		return "", "", fmt.Errorf("pyspark %s not installed (hack/infra.d/60-spark.sh with PREBAKE_SPARK_VERSIONS=%[1]s; make parity-lines installs every line): %[2]w", sparkLines[line].Version, err)
	}
	return home, dir, nil
}

// oracle runs the real spark-submit of one Spark line. Its JVM gets a
// throw-away user.home (so that Spark's local-m2-cache and Ivy's default
// directories are empty), an empty SPARK_CONF_DIR, and spark.jars.ivy in
// a throw-away directory; DEFAULT_ARTIFACT_REPOSITORY points Spark's
// central and spark-packages resolvers at the machine's Central.
type oracle struct {
	line    string
	central string
	ivy     string // spark.jars.ivy (its cache is shared by the runs of one oracle)
	home    string // user.home and HOME
	conf    string // SPARK_CONF_DIR
	app     string // the no-op Python application
	// jvmOpts go to the SparkSubmit JVM besides user.home: the parity run
	// starts it with C1 only and the serial collector (startup-bound, and
	// no effect on what Ivy resolves); the benchmark leaves Spark's
	// defaults.
	jvmOpts string
}

func newOracle(line, central, dir string) (*oracle, error) {
	o := &oracle{line: line, central: central, ivy: filepath.Join(dir, "ivy"), home: filepath.Join(dir, "home"), conf: filepath.Join(dir, "conf"), app: filepath.Join(dir, "noop.py")}
	for _, d := range []string{o.ivy, o.home, o.conf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return o, os.WriteFile(o.app, []byte("# prebake's Central parity: a no-op application\n"), 0o644)
}

// resolveRE is Ivy's resolution report line: ":: resolution report ::
// resolve 4651ms :: artifacts dl 644ms".
var resolveRE = regexp.MustCompile(`:: resolution report :: resolve (\d+)ms :: artifacts dl (\d+)ms`)

// run submits the no-op app with the case's --packages, --repositories and
// --exclude-packages and returns the jars Spark retrieved (from
// <spark.jars.ivy>/jars, emptied first) and the duration of Spark's
// resolution phase (Ivy's resolve + artifacts download, as Ivy reports it).
func (o *oracle) run(ctx context.Context, c kase, testdata string) (outcome, time.Duration, error) {
	home, pyPath, err := sparkHome(o.line)
	if err != nil {
		return outcome{}, 0, err
	}
	ss := testenv.SparkSubmit{Home: home, PythonPath: pyPath, Central: o.central, Ivy: o.ivy, UserHome: o.home, ConfDir: o.conf, JVMOpts: o.jvmOpts}
	job := testenv.SparkJob{Packages: c.coords, Excludes: c.exclude, App: o.app}
	if r := c.expand(o.central, testdata); len(r) > 0 {
		job.Repositories = strings.Join(r, ",")
	}
	out, runErr := ss.Run(ctx, job)
	var phase time.Duration
	if m := resolveRE.FindStringSubmatch(out); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		phase = time.Duration(a+b) * time.Millisecond
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return outcome{}, 0, ctx.Err()
		}
		// A resolution failure is an outcome; anything else is the
		// harness's problem.
		if strings.Contains(out, "unresolved dependency") || strings.Contains(out, "RuntimeException: [download failed") {
			return outcome{failed: true, detail: testenv.LastLines(out, 8)}, phase, nil
		}
		return outcome{}, 0, fmt.Errorf("spark-submit %s: %v:\n%s", sparkLines[o.line].Version, runErr, testenv.LastLines(out, 15))
	}
	jars, err := ss.Jars()
	if err != nil {
		return outcome{}, 0, fmt.Errorf("spark-submit %s retrieved nothing readable: %w:\n%s", sparkLines[o.line].Version, err, testenv.LastLines(out, 15))
	}
	return outcome{jars: jars}, phase, nil
}
