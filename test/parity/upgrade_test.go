package parity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/pipeline/upgrade"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

var updateUpgrade = flag.Bool("update-upgrade", false, "rewrite testdata/parity/upgrade/findings.txt from the live upgrade run")

// upgradeJobs are real Spark 3.5 jobs (testdata/central/cases.txt's
// coordinates) the live upgrade test moves to 4.0, then from there to 4.3.
var upgradeJobs = []struct{ name, packages string }{
	{"delta", "io.delta:delta-spark_2.12:3.3.2"},
	{"kafka", "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"},
	{"avro", "org.apache.spark:spark-avro_2.12:3.5.7"},
	{"hadoop-aws", "org.apache.hadoop:hadoop-aws:3.3.4"},
	{"iceberg", "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0"},
	{"aws-delta-kafka", "org.apache.hadoop:hadoop-aws:3.3.4,io.delta:delta-spark_2.12:3.3.2,org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"},
}

// upgradeFrom is the jobs' Spark (pyspark installed by 60-spark.sh), and
// upgradeTo the lines they move to in turn.
const upgradeFrom = "3.5.9"

var upgradeTo = []string{"4.0", "4.3"}

// lineHome is the installed pyspark of Spark line l (testenv.SparkLines).
func lineHome(l string) (string, error) {
	for _, sl := range testenv.SparkLines {
		if sl.Name == l {
			return "pyspark-" + sl.Version, nil
		}
	}
	return "", fmt.Errorf("no pyspark of line %s in testenv.SparkLines", l)
}

// lineIvy is the Ivy of Spark line l (testenv.SparkLines).
func lineIvy(l string) string {
	for _, sl := range testenv.SparkLines {
		if sl.Name == l {
			return sl.Ivy
		}
	}
	return ""
}

// TestUpgradeReportLive proves the upgrade report on the real Central
// (PREBAKE_LIVE=1, make test-live; the JVM tier): each job moves from
// Spark 3.5.9 to the 4.0 line, then from there to the 4.3 line, and every
// set the report resolves, the current one and each target, is the set
// the real spark-submit of that line retrieves for the same packages: the
// same jar file names and sha256. The report's coordinate mapping of each
// step is written to testdata/parity/upgrade/findings.txt with
// -update-upgrade (what Central has for each line changes with its
// releases, so it is a record, not a golden).
func TestUpgradeReportLive(t *testing.T) {
	testenv.NeedJVM(t)
	if !testenv.Live() {
		t.Skip("live oracle on the real Central: PREBAKE_LIVE=1 (make test-live) runs it")
	}
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	// One prebake cache and one empty home for every report (a user's);
	// one pool of four Ivy directories per Ivy version for the lines'
	// spark-submit runs (four in flight at most: Central etiquette).
	cache, home := t.TempDir(), t.TempDir()
	subs := map[string]*sparkSubmit{}
	pools := map[string]*ivyPool{}
	for _, l := range append([]string{revision.MajorMinor(upgradeFrom)}, upgradeTo...) {
		dir, err := lineHome(l)
		if err != nil {
			t.Fatal(err)
		}
		ivy := lineIvy(l)
		if pools[ivy] == nil {
			pools[ivy] = newIvyPool(t, 4)
		}
		subs[l] = newSparkSubmit(t, dir, central, pools[ivy])
	}
	var (
		mu       sync.Mutex
		problems []string
		findings []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	// check runs spark-submit of line l on packages and compares with the
	// set the report resolved.
	check := func(id, l, packages string, want outcome) {
		t0 := time.Now()
		got, err := subs[l].run(ctx, job{packages: packages})
		if err != nil {
			fail("%s: %v", id, err)
			return
		}
		state := "ok"
		if d := compare(got, want); d != "" {
			state = "DIFF"
			fail("%s: the report's set differs from spark-submit %s's (- spark-submit only, + report only):\n%s", id, l, d)
		}
		t.Logf("%-4s %-34s %3d jars  spark-submit %s %5.1fs", state, id, len(got.jars), l, time.Since(t0).Seconds())
	}
	// Each job's chain of steps runs in order; the jobs run side by side,
	// at most four spark-submit runs in flight (the pool's slots).
	parallel(len(upgradeJobs), 4, func(i int) {
		j := upgradeJobs[i]
		from, packages := upgradeFrom, j.packages
		for n, to := range upgradeTo {
			id := fmt.Sprintf("%s %s→%s", j.name, from, to)
			req := resolver.Request{Packages: []string{packages}, CacheDir: cache, Home: home, DefaultArtifactRepository: central}
			r, err := upgrade.Plan(ctx, upgrade.Input{Request: req, From: from, To: to})
			if errors.Is(err, errdefs.NotFound) {
				// The target line has no release of the job's Spark
				// modules in Central as this machine reaches it: the
				// report's answer (exit 66), and the end of this chain.
				mu.Lock()
				findings = append(findings, fmt.Sprintf("%s: no report: %v\n", id, err))
				mu.Unlock()
				return
			}
			if err != nil {
				fail("%s: upgrade-report: %v", id, err)
				return
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s: Spark %s → %s (%d → %d jars)\n", id, r.From.Spark, r.To.Spark, r.From.Jars, r.To.Jars)
			for _, c := range r.Coordinates {
				fmt.Fprintf(&b, "  %s → %s (%s", c.From, orNone(c.To), c.Change)
				if c.Newest != "" {
					fmt.Fprintf(&b, ", newest %s", c.Newest)
				}
				b.WriteString(")\n")
			}
			for _, p := range r.Problems {
				fmt.Fprintf(&b, "  problem %s: %s\n", p.Kind, p.Message)
			}
			mu.Lock()
			findings = append(findings, b.String())
			mu.Unlock()
			if n == 0 {
				check(fmt.Sprintf("%s %s", j.name, from), revision.MajorMinor(from), r.From.Packages, lockOutcome(r.FromLock.Artifacts))
			}
			switch {
			case r.ToLock != nil:
				check(id, to, r.To.Packages, lockOutcome(r.ToLock.Artifacts))
			case r.To.Packages != "":
				// The target set does not resolve: spark-submit must fail
				// on it too.
				check(id, to, r.To.Packages, outcome{failed: true})
				return
			default:
				return // every coordinate left out: nothing to submit
			}
			from, packages = r.To.Spark, r.To.Packages
			if strings.Count(from, ".") < 2 {
				// A job with no Spark module: the line's installed patch.
				home, _ := lineHome(to)
				from = strings.TrimPrefix(home, "pyspark-")
			}
		}
	})
	sort.Strings(findings)
	t.Logf("upgrade report findings:\n%s", strings.Join(findings, ""))
	t.Logf("%d jobs × %d steps in %s", len(upgradeJobs), len(upgradeTo), time.Since(start).Round(time.Second))
	if *updateUpgrade {
		p := filepath.Join(parityDir, "upgrade", "findings.txt")
		head := "# The upgrade report's coordinate mapping on the real Central (test/parity TestUpgradeReportLive,\n" +
			"# -update-upgrade), recorded " + time.Now().UTC().Format("2006-01-02") + "; every set checked against spark-submit of its line.\n"
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		// No host and no throw-away path in the repository: the machine's
		// Central is ${CENTRAL}, the empty home ${HOME}.
		text := strings.NewReplacer(central, "${CENTRAL}", home, "${HOME}").Replace(head + strings.Join(findings, ""))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("%d problem(s):\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
