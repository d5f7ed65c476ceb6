// Command central checks prebake against the real spark-submit on the real
// Maven Central, as this machine reaches it (repo.MavenCentralURL: the
// mirror of central in Maven's settings.xml, else Maven's own super POM; no
// host name is written in the repository).
//
//	go run ./hack/central            # live: every case of testdata/central/cases.txt through
//	                                 # spark-submit and prebake; both must match the golden (names
//	                                 # and sha256) (make parity-central)
//	go run ./hack/central -record    # rewrite the goldens from spark-submit, and the mirror of the
//	                                 # POMs and metadata the resolutions read (testdata/central/mirror.tar.gz)
//	go run ./hack/central -only s35- # only the cases whose name starts with s35-
//	go run ./hack/central -lines all # every Spark line of testenv.SparkLines (default ci: the
//	                                 # lines .ci/run checks; or names: -lines 3.4,4.3) (make parity-lines)
//	go run ./hack/central -mirror    # rewrite only the mirror (prebake alone; after editing cases)
//	go run ./hack/central -diff 5 -seed 7
//	                                 # differential: 5 random combinations per Spark line of the
//	                                 # cases' single packages, Spark vs prebake (no golden)
//
// The hermetic replay of the goldens is hack/central's unit test; the cold
// speed comparison is its benchmark (make bench).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

func main() {
	rec := flag.Bool("record", false, "rewrite the goldens from spark-submit and the recorded mirror")
	only := flag.String("only", "", "only the cases whose name (name@line on a case of several lines) starts with one of these comma-separated prefixes")
	lines := flag.String("lines", "ci", "the Spark lines: ci (those .ci/run checks live), all, or comma-separated names of testenv.SparkLines")
	mirrorOnly := flag.Bool("mirror", false, "rewrite only the recorded mirror, from every case resolved by prebake on Central (no Spark)")
	diff := flag.Int("diff", 0, "instead of the cases: this many random combinations (2–4) of the cases' single packages, per Spark line")
	seed := flag.Int64("seed", 1, "with -diff: the random seed")
	versions := flag.String("versions", "", "print the pyspark versions of these lines (as -lines) and exit (make parity-lines installs them)")
	flag.Parse()
	if *versions != "" {
		vs, err := lineVersions(*versions)
		if err != nil {
			fmt.Fprintln(os.Stderr, "central:", err)
			os.Exit(2)
		}
		fmt.Println(strings.Join(vs, " "))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, err := os.Getwd()
	switch {
	case err != nil:
	case *mirrorOnly:
		err = recordMirror(ctx, root)
	default:
		err = run(ctx, root, *lines, *only, *rec, *diff, *seed)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "central:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "central: ok")
}

// setup reads the machine's Central URL and the cases, and makes the
// run's throw-away directory (the caller removes it).
func setup(root string) (central, testdata string, cases []kase, work string, err error) {
	if central, err = repo.MavenCentralURL("", ""); err != nil {
		return
	}
	testdata = filepath.Join(root, "testdata", "central")
	if cases, err = loadCases(filepath.Join(testdata, "cases.txt")); err != nil {
		return
	}
	work, err = os.MkdirTemp("", "prebake-central-")
	return
}

func run(ctx context.Context, root, lines, only string, rec bool, diff int, seed int64) error {
	central, testdata, cases, work, err := setup(root)
	if err != nil {
		return err
	}
	if cases, err = onLines(cases, lines); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	// Recording writes the mirror into a directory, packed at the end, over
	// the committed mirror (a recording adds to it; -mirror rewrites it).
	mirror := filepath.Join(work, "mirror")
	archive := filepath.Join(testdata, mirrorArchive)
	if rec {
		if err := unpackMirror(archive, mirror); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	// One prebake cache for every case (content-addressed, as a user's);
	// one throw-away Ivy directory per Spark line, shared by its cases (as
	// a user's ~/.ivy2 is), whose jars directory is emptied before each.
	cache := filepath.Join(work, "prebake-cache")
	home := filepath.Join(work, "prebake-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	if diff > 0 {
		if rec {
			return errors.New("-diff compares Spark and prebake; it records nothing")
		}
		cases, only = randomCases(cases, diff, seed), ""
	}
	byLine := map[string][]kase{}
	n := 0
	for _, c := range cases {
		if selected(c.id(), only) {
			byLine[c.spark] = append(byLine[c.spark], c)
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no case starts with %q", only)
	}
	fmt.Fprintf(os.Stderr, "central: %d case(s); Spark and prebake both resolve from the machine's Central\n", n)
	start := time.Now()
	var mu sync.Mutex
	var problems []string
	var wg sync.WaitGroup
	errs := make(chan error, len(byLine))
	for line, cs := range byLine {
		o, err := newOracle(line, central, filepath.Join(work, "spark-"+line))
		if err != nil {
			return err
		}
		o.jvmOpts = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range cs {
				p, err := check(ctx, c, o, central, testdata, home, cache, mirror, rec)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", c.id(), err)
					return
				}
				if p != "" {
					mu.Lock()
					problems = append(problems, c.id()+":\n"+p)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		return err
	}
	if only == "" && diff == 0 && slices.Contains(strings.Split(lines, ","), "ci") {
		if p, err := centralLock(ctx, central, testdata, home, cache, rec); err != nil {
			return err
		} else if p != "" {
			problems = append(problems, p)
		}
	}
	if rec {
		if err := packMirror(mirror, archive); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "central: %d case(s) in %s (%s)\n", n, time.Since(start).Round(time.Second), strings.Join(linesOf(byLine), " "))
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%d case(s) differ:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	return nil
}

// recordMirror rewrites testdata/central/mirror.tar.gz from scratch: every
// case's graph built by prebake on Central through the recorder.
func recordMirror(ctx context.Context, root string) error {
	central, testdata, cases, work, err := setup(root)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	mirror, home, cache := filepath.Join(work, "mirror"), filepath.Join(work, "home"), filepath.Join(work, "cache")
	for _, c := range cases {
		if err := record(ctx, c, central, testdata, home, cache, mirror); err != nil {
			return fmt.Errorf("%s: %w", c.id(), err)
		}
	}
	return packMirror(mirror, filepath.Join(testdata, mirrorArchive))
}

// randomCases draws n combinations of 2–4 distinct packages per Spark
// line from the line's single-package cases without --repositories or
// --exclude-packages, and not the -missing ones (the popular packages), in a random order: Ivy's
// answer depends on the order. The same seed draws the same sets.
func randomCases(cases []kase, n int, seed int64) []kase {
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	pool := map[string][]string{}
	seen := map[string]bool{}
	for _, c := range cases {
		if strings.Contains(c.coords, ",") || len(c.repos) > 0 || c.exclude != "" || strings.HasSuffix(c.name, "-missing") || seen[c.spark+c.coords] {
			continue
		}
		seen[c.spark+c.coords] = true
		pool[c.spark] = append(pool[c.spark], c.coords)
	}
	var out []kase
	for _, line := range sortedLines() {
		p := pool[line]
		for i := 0; i < n && len(p) >= 2; i++ {
			k := 2 + r.IntN(min(3, len(p)-1))
			perm := r.Perm(len(p))[:k]
			var coords []string
			for _, j := range perm {
				coords = append(coords, p[j])
			}
			out = append(out, kase{name: fmt.Sprintf("diff-%s-%d-%d", line, seed, i+1), spark: line, coords: strings.Join(coords, ",")})
		}
	}
	return out
}

// lockCoords are the coordinates of the README's `prebake lock diff`
// example: a lock from the Debian corpus (testdata/parity/repos/deb) against
// the committed Central lock of the same coordinates.
const lockCoords = "org.apache.httpcomponents:httpclient:4.5.14"

// centralLock resolves lockCoords with prebake's default chain on Central
// and compares the lock (the Central URL written as ${CENTRAL}) with
// testdata/central/locks/httpclient-central.lock, or rewrites it.
func centralLock(ctx context.Context, central, testdata, home, cache string, rec bool) (string, error) {
	dir, err := os.MkdirTemp("", "prebake-central-lock-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	req := resolver.Request{Packages: []string{lockCoords}, CacheDir: cache, LockPath: filepath.Join(dir, "prebake.lock"),
		Home: home, DefaultArtifactRepository: central}
	if _, err := resolver.Resolve(ctx, req); err != nil {
		return "", fmt.Errorf("the Central lock of %s: %w", lockCoords, err)
	}
	data, err := os.ReadFile(req.LockPath)
	if err != nil {
		return "", err
	}
	got := strings.ReplaceAll(string(data), central, "${CENTRAL}")
	path := filepath.Join(testdata, "locks", "httpclient-central.lock")
	if rec {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		return "", os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if got != string(want) {
		return fmt.Sprintf("%s: the committed lock differs from what Central serves now:\n--- committed\n%s--- live\n%s", path, want, got), nil
	}
	return "", nil
}

// lineVersions are the pyspark versions of the lines of sel (as onLines).
func lineVersions(sel string) ([]string, error) {
	var cs []kase
	for _, l := range testenv.SparkLines {
		cs = append(cs, kase{spark: l.Name})
	}
	cs, err := onLines(cs, sel)
	var vs []string
	for _, c := range cs {
		vs = append(vs, c.sparkVersion())
	}
	return vs, err
}

// onLines keeps the cases on the lines of sel: "ci" (testenv.SparkLines'
// CI lines), "all", or comma-separated line names (with ci and all).
func onLines(cases []kase, sel string) ([]kase, error) {
	want := map[string]bool{}
	for _, s := range strings.Split(sel, ",") {
		switch _, ok := sparkLines[s]; {
		case s == "ci" || s == "all":
			for _, l := range testenv.SparkLines {
				want[l.Name] = want[l.Name] || l.CI || s == "all"
			}
		case ok:
			want[s] = true
		default:
			return nil, fmt.Errorf("-lines %q: want ci, all or comma-separated names of %v", s, sortedLines())
		}
	}
	var out []kase
	for _, c := range cases {
		if want[c.spark] {
			out = append(out, c)
		}
	}
	return out, nil
}

// linesOf are the lines of byLine with their pyspark versions, oldest first.
func linesOf(byLine map[string][]kase) []string {
	var out []string
	for _, l := range testenv.SparkLines {
		if cs := byLine[l.Name]; len(cs) > 0 {
			out = append(out, fmt.Sprintf("%s=%s:%d", l.Name, l.Version, len(cs)))
		}
	}
	return out
}

// selected reports whether name starts with one of the comma-separated
// prefixes of only ("" selects every case).
func selected(name, only string) bool {
	for _, p := range strings.Split(only, ",") {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// check runs one case through spark-submit and prebake. Recording, it
// writes Spark's answer as the golden and records the mirror; otherwise
// Spark's answer must equal the golden. Either way prebake must equal
// Spark, names and bytes.
func check(ctx context.Context, c kase, o *oracle, central, testdata, home, cache, mirror string, rec bool) (string, error) {
	t0 := time.Now()
	spark, phase, err := o.run(ctx, c, testdata)
	if err != nil {
		return "", err
	}
	t1 := time.Now()
	pb, _, err := prebakeRun(ctx, c, central, testdata, home, cache)
	if err != nil {
		return "", err
	}
	t2 := time.Now()
	var problems []string
	gp := goldenPath(filepath.Dir(filepath.Dir(testdata)), c)
	if rec {
		if err := os.MkdirAll(filepath.Dir(gp), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(gp, []byte(spark.golden(c)), 0o644); err != nil {
			return "", err
		}
		if err := record(ctx, c, central, testdata, home, cache, mirror); err != nil {
			return "", fmt.Errorf("recording the mirror: %w", err)
		}
	} else if !strings.HasPrefix(c.name, "diff-") {
		golden, err := readGolden(gp)
		if err != nil {
			return "", fmt.Errorf("%w (record it with go run ./hack/central -record -lines %s -only %s)", err, c.spark, c.id())
		}
		if d := compare(golden, spark, true); d != "" {
			problems = append(problems, "spark-submit differs from the golden (- golden only, + Spark only):\n"+d)
		}
	}
	if d := compare(spark, pb, true); d != "" {
		problems = append(problems, "prebake differs from spark-submit (- Spark only, + prebake only):\n"+d)
	}
	state := "ok"
	if len(problems) > 0 {
		state = "DIFF"
	}
	what := fmt.Sprintf("%d jars", len(spark.jars))
	if spark.failed {
		what = "resolution fails"
	}
	fmt.Fprintf(os.Stderr, "%-4s %-38s %-16s spark-submit %5.1fs (Ivy %4.1fs)  prebake %4.1fs\n", state, c.id(), what, t1.Sub(t0).Seconds(), phase.Seconds(), t2.Sub(t1).Seconds())
	return strings.Join(problems, "\n"), nil
}
