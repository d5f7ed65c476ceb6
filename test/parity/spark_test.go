// Package parity holds the live oracles of issue 45 ("Ivy is a moving
// target"): the real spark-submit of each Ivy the Spark lines use (2.5.1,
// 2.5.3) and of Ivy 2.6.0 (the newest line's distribution with its Ivy jar
// replaced, hack/infra.d/62-spark-ivy.sh), against prebake's resolver and
// the upgrade report, on testdata/parity's repositories and the real Maven
// Central as the machine reaches it.
package parity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
)

// ivyHome is, per Ivy version, the Spark distribution whose spark-submit
// answers for it: the pyspark of a line that ships that Ivy
// (testenv.SparkLines), or for 2.6.0, which no release ships, the newest
// line's with jars/ivy-2.6.0.jar in place of its own (62-spark-ivy.sh).
type ivyHome struct {
	ivy   string // the Ivy version
	spark string // the Spark version prebake is told (its line's rules)
	dir   string // under testenv.CacheDir(): SPARK_HOME is dir/pyspark, PYTHONPATH dir
}

// ivyHomes are the oracles, oldest Ivy first.
var ivyHomes = []ivyHome{
	{ivy: resolver.Ivy251, spark: "3.4.4", dir: "pyspark-3.4.4"},
	{ivy: resolver.Ivy253, spark: "4.3.0", dir: "pyspark-4.3.0"},
	{ivy: resolver.Ivy260, spark: "4.3.0", dir: "spark-4.3.0-ivy-2.6.0"},
}

// ivyRequest is what prebake is told for h: the line's Spark version, and
// the Ivy only where it is not the line's own.
func (h ivyHome) ivyRequest(req resolver.Request) resolver.Request {
	req.SparkVersion = h.spark
	if eff, err := resolver.EffectiveIvy(h.spark, ""); err != nil || eff != h.ivy {
		req.IvyVersion = h.ivy
	}
	return req
}

// sparkHomeOf is SPARK_HOME and PYTHONPATH of dir (under CacheDir), or
// skips (fails under CI) when it is missing.
func sparkHomeOf(t testing.TB, dir string) (home, pyPath string) {
	t.Helper()
	pyPath = filepath.Join(testenv.CacheDir(), dir)
	home = filepath.Join(pyPath, "pyspark")
	if _, err := os.Stat(filepath.Join(home, "bin", "spark-submit")); err != nil {
		testenv.Skip(t, dir+" is not installed under "+testenv.CacheDir()+": run hack/infra.sh (60-spark.sh, 62-spark-ivy.sh)")
	}
	return home, pyPath
}

// sparkSubmit runs the real spark-submit of one distribution. Its JVM gets
// a throw-away user.home and HOME (so Spark's local-m2-cache and Ivy's
// default directories are empty), an empty SPARK_CONF_DIR, and
// spark.jars.ivy in a directory of its pool's (ivyPool); DEFAULT_ARTIFACT_REPOSITORY
// points Spark's central resolver at the machine's Central.
type sparkSubmit struct {
	home, pyPath, central string
	pool                  *ivyPool
}

// ivyPool is a set of spark.jars.ivy directories, one per run in flight
// (Ivy's cache takes no lock across JVMs), each reused by later runs: its
// cache is shared by the distributions of one Ivy version (the cache holds
// the descriptors that Ivy made of the POMs, so distributions of different
// Ivys never share a pool). At most cap(slots) runs are in flight.
type ivyPool struct {
	dir   string
	slots chan int
}

func newIvyPool(t testing.TB, inFlight int) *ivyPool {
	t.Helper()
	p := &ivyPool{dir: t.TempDir(), slots: make(chan int, inFlight)}
	for i := range inFlight {
		p.slots <- i
	}
	if err := os.WriteFile(filepath.Join(p.dir, "noop.py"), []byte("# a no-op application: only --packages matters\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func newSparkSubmit(t testing.TB, dir, central string, pool *ivyPool) *sparkSubmit {
	t.Helper()
	home, pyPath := sparkHomeOf(t, dir)
	return &sparkSubmit{home: home, pyPath: pyPath, central: central, pool: pool}
}

// job is one spark-submit's resolution inputs.
type job struct {
	packages, repositories, excludes, ivySettings string
}

// outcome is what one side retrieved: jar file name → sha256, or a
// failure to resolve.
type outcome struct {
	jars   map[string]string
	failed bool
	detail string // why it failed (not compared)
}

// run submits the no-op application with j and returns the jars Spark
// retrieved (<spark.jars.ivy>/jars, emptied first). A resolution failure
// is an outcome; anything else is an error.
func (s *sparkSubmit) run(ctx context.Context, j job) (outcome, error) {
	slot := <-s.pool.slots
	defer func() { s.pool.slots <- slot }()
	base := filepath.Join(s.pool.dir, fmt.Sprint(slot))
	ss := testenv.SparkSubmit{Home: s.home, PythonPath: s.pyPath, Central: s.central,
		Ivy: filepath.Join(base, "ivy"), UserHome: filepath.Join(base, "home"), ConfDir: filepath.Join(base, "conf"),
		JVMOpts: "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
	for _, d := range []string{ss.Ivy, ss.UserHome, ss.ConfDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return outcome{}, err
		}
	}
	o, err := ss.Run(ctx, testenv.SparkJob{Packages: j.packages, Repositories: j.repositories, Excludes: j.excludes, IvySettings: j.ivySettings,
		App: filepath.Join(s.pool.dir, "noop.py")})
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, ctx.Err()
		}
		if strings.Contains(o, "unresolved dependency") || strings.Contains(o, "[download failed") ||
			strings.Contains(o, "ParseException") || strings.Contains(o, "unknown conflict manager") {
			return outcome{failed: true, detail: testenv.LastLines(o, 6)}, nil
		}
		return outcome{}, fmt.Errorf("spark-submit (%s) %s: %v:\n%s", s.home, j.packages, err, testenv.LastLines(o, 15))
	}
	jars, err := ss.Jars()
	if err != nil {
		return outcome{}, fmt.Errorf("spark-submit (%s) %s retrieved nothing readable: %w:\n%s", s.home, j.packages, err, testenv.LastLines(o, 15))
	}
	return outcome{jars: jars}, nil
}

// prebakeOutcome resolves req with prebake and returns the locked jars.
func prebakeOutcome(ctx context.Context, req resolver.Request) outcome {
	res, err := resolver.Resolve(ctx, req)
	if err != nil {
		return outcome{failed: true, detail: err.Error()}
	}
	return lockOutcome(res.Lock.Artifacts)
}

// render is an outcome as golden lines: "jar NAME SHA256", sorted, or
// "fails".
func (o outcome) render() string {
	if o.failed {
		return "fails\n"
	}
	var lines []string
	for n, sum := range o.jars {
		lines = append(lines, "jar "+n+" "+sum)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// compare is "" when a and b retrieved the same (names and bytes), else a
// diff: "- " lines are a's only, "+ " lines b's only.
func compare(a, b outcome) string {
	ra, rb := strings.Split(strings.TrimSpace(a.render()), "\n"), strings.Split(strings.TrimSpace(b.render()), "\n")
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	ma, mb := in(ra), in(rb)
	var d []string
	for _, s := range ra {
		if !mb[s] {
			d = append(d, "- "+s)
		}
	}
	for _, s := range rb {
		if !ma[s] {
			d = append(d, "+ "+s)
		}
	}
	if len(d) == 0 {
		return ""
	}
	if a.detail != "" {
		d = append(d, "  (first side: "+a.detail+")")
	}
	if b.detail != "" {
		d = append(d, "  (second side: "+b.detail+")")
	}
	return strings.Join(d, "\n")
}

// parallel runs fn(i) for i in [0, n), at most limit at a time.
func parallel(n, limit int, fn func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}
