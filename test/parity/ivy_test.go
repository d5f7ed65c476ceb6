package parity

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

var updateSpark = flag.Bool("update-spark", false, "rewrite testdata/parity/spark goldens from the real spark-submit of each Ivy")

// sparkDir holds the cases and goldens of the per-Ivy spark-submit oracle.
var (
	parityDir = filepath.Join("..", "..", "testdata", "parity")
	sparkDir  = filepath.Join(parityDir, "spark")
)

// ivyCase is one line of testdata/parity/spark/cases.txt.
type ivyCase struct {
	name, packages, repositories, ivySettings string
	central                                   bool // resolves from the real Central (live only)
}

// loadIvyCases reads cases.txt: name | --packages | --repositories |
// spark.jars.ivySettings (a file of testdata/parity/spark). ${PARITY} is
// testdata/parity (absolute); a case with no repository and no settings
// file resolves from Central.
func loadIvyCases(t testing.TB) []ivyCase {
	t.Helper()
	f, err := os.Open(filepath.Join(sparkDir, "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	abs, err := filepath.Abs(parityDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []ivyCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := strings.Split(l, "|")
		if len(p) != 4 {
			t.Fatalf("cases.txt:%d: want 4 |-separated fields", n)
		}
		for i := range p {
			p[i] = strings.TrimSpace(strings.ReplaceAll(p[i], "${PARITY}", abs))
		}
		c := ivyCase{name: p[0], packages: p[1], repositories: p[2], ivySettings: p[3]}
		c.central = c.repositories == "" && c.ivySettings == ""
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// settingsFile writes c's ivySettings template (${PARITY} expanded) into
// dir and returns its path ("" for none).
func (c ivyCase) settingsFile(t testing.TB, dir string) string {
	t.Helper()
	if c.ivySettings == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(sparkDir, c.ivySettings))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(parityDir)
	p := filepath.Join(dir, c.name+"-"+c.ivySettings)
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "${PARITY}", abs)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (c ivyCase) golden(h ivyHome) string {
	return filepath.Join(sparkDir, c.name+"@"+h.ivy+".golden")
}

// request is prebake's resolution of c under h: the chain Spark builds
// (Home empty, central = the machine's Central) or, offline, only the
// case's repositories (central has none of their modules) or settings.
func (c ivyCase) request(h ivyHome, settings, cache, home, central string) resolver.Request {
	req := resolver.Request{Packages: []string{c.packages}, CacheDir: cache, Home: home, IvySettings: settings}
	if c.repositories != "" {
		req.Repositories = []string{c.repositories}
	}
	if central == "" {
		req.NoDefaultRepositories = true
		req.ChecksumPolicy = resolver.ChecksumIgnore
	} else {
		req.DefaultArtifactRepository = central
	}
	return h.ivyRequest(req)
}

func lockOutcome(arts []lock.Artifact) outcome {
	o := outcome{jars: map[string]string{}}
	for _, a := range arts {
		o.jars[a.File] = a.Sha256
	}
	return o
}

func readGolden(t testing.TB, path string) outcome {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it: PREBAKE_IT=1 PREBAKE_JVM=1 go test ./test/parity -run TestIvySparkSubmitLive -update-spark)", err)
	}
	o := outcome{jars: map[string]string{}}
	for _, l := range strings.Split(string(b), "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 1 && f[0] == "fails":
			o.failed = true
		case len(f) == 3 && f[0] == "jar":
			o.jars[f[1]] = f[2]
		}
	}
	return o
}

// TestIvySparkSubmitGoldens replays the recorded answers of the real
// spark-submit of each Ivy (the unit tier): prebake, told the line's
// Spark version (and --ivy-version 2.6.0 for the patched distribution),
// retrieves the same jars, names and bytes, from the cases' own
// repositories. The Central cases' goldens are checked live only.
func TestIvySparkSubmitGoldens(t *testing.T) {
	cases := loadIvyCases(t)
	cache := t.TempDir()
	for _, c := range cases {
		for _, h := range ivyHomes {
			want := readGolden(t, c.golden(h))
			if c.central {
				continue
			}
			t.Run(c.name+"@"+h.ivy, func(t *testing.T) {
				dir := t.TempDir()
				got := prebakeOutcome(context.Background(), c.request(h, c.settingsFile(t, dir), cache, dir, ""))
				if d := compare(want, got); d != "" {
					t.Errorf("prebake differs from spark-submit's recorded answer (- spark-submit only, + prebake only):\n%s", d)
				}
			})
		}
	}
}

// TestIvySparkSubmitLive asks the real spark-submit of each Ivy (2.5.1:
// pyspark 3.4.4; 2.5.3: pyspark 4.3.0; 2.6.0: pyspark 4.3.0 with Ivy
// 2.6.0's jar, hack/infra.d/62-spark-ivy.sh) every case of
// testdata/parity/spark, and checks its answer against the golden and
// prebake's (the Central cases on the machine's Central). It re-asks only
// when its inputs changed since the recorded STAMP, or under
// PREBAKE_LIVE=1 (make test-live); -update-spark rewrites the goldens.
func TestIvySparkSubmitLive(t *testing.T) {
	testenv.NeedJVM(t)
	var values []string
	for _, h := range ivyHomes {
		values = append(values, h.ivy+"="+h.dir)
	}
	newStamp := func() *testenv.Stamp {
		return testenv.NewStamp(t, "testdata/parity/spark/STAMP",
			[]string{"testdata/parity/spark", "testdata/parity/repos/ivy1654", "testdata/parity/repos/nearest",
				"resolver/*.go", "resolver/repo", "resolver/ivysettings", "maven", "test/parity/spark_test.go", "test/parity/ivy_test.go", "internal/testenv/sparksubmit.go",
				"hack/infra.d/62-spark-ivy.sh"}, values...)
	}
	stamp := newStamp()
	if !*updateSpark && stamp.Fresh() {
		t.Logf("inputs unchanged since the last live run (stamp %.12s): the goldens stand; PREBAKE_LIVE=1 re-asks spark-submit", stamp)
		return
	}
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		t.Fatal(err)
	}
	cases := loadIvyCases(t)
	// At most 4 spark-submit runs in flight in all (Central etiquette),
	// over the three distributions.
	subs := make([]*sparkSubmit, len(ivyHomes))
	for i, h := range ivyHomes {
		subs[i] = newSparkSubmit(t, h.dir, central, newIvyPool(t, 2))
	}
	type run struct {
		c ivyCase
		h int
	}
	var runs []run
	for _, c := range cases {
		for i := range ivyHomes {
			runs = append(runs, run{c, i})
		}
	}
	cache, work := t.TempDir(), t.TempDir()
	ctx := context.Background()
	start := time.Now()
	var mu sync.Mutex
	var problems []string
	report := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	parallel(len(runs), 4, func(i int) {
		r := runs[i]
		h, id := ivyHomes[r.h], r.c.name+"@"+ivyHomes[r.h].ivy
		dir := filepath.Join(work, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			report("%s: %v", id, err)
			return
		}
		settings := r.c.settingsFile(t, dir)
		t0 := time.Now()
		spark, err := subs[r.h].run(ctx, job{packages: r.c.packages, repositories: r.c.repositories, ivySettings: settings})
		if err != nil {
			report("%s: %v", id, err)
			return
		}
		t1 := time.Now()
		pb := prebakeOutcome(ctx, r.c.request(h, settings, cache, dir, central))
		state := "ok"
		if d := compare(spark, pb); d != "" {
			state = "DIFF"
			report("%s: prebake differs from spark-submit (- spark-submit only, + prebake only):\n%s", id, d)
		}
		if *updateSpark {
			if err := os.WriteFile(r.c.golden(h), []byte(spark.render()), 0o644); err != nil {
				report("%s: %v", id, err)
			}
		} else if d := compare(readGolden(t, r.c.golden(h)), spark); d != "" {
			state = "DIFF"
			report("%s: spark-submit differs from the golden (- golden only, + spark-submit only):\n%s", id, d)
		}
		what := fmt.Sprintf("%d jars", len(spark.jars))
		if spark.failed {
			what = "fails"
		}
		t.Logf("%-4s %-28s %-9s spark-submit %4.1fs  prebake %4.1fs", state, id, what, t1.Sub(t0).Seconds(), time.Since(t1).Seconds())
	})
	t.Logf("%d runs in %s", len(runs), time.Since(start).Round(time.Second))
	if len(problems) > 0 {
		t.Fatalf("%d problem(s):\n%s", len(problems), strings.Join(problems, "\n"))
	}
	if *updateSpark {
		stamp = newStamp() // over the rewritten goldens
	}
	if err := stamp.Record(); err != nil {
		t.Fatal(err)
	}
	t.Logf("live run passed: stamp %.12s recorded (commit it with the goldens)", stamp)
}
