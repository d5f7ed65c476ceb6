// Command parity maintains and checks the parity suite of testdata/parity
// against the real Ivy oracle (../shared/oracle/run-oracle.sh).
//
//	go run ./hack/parity -init     # (re)create cases from hack/parity/cases.txt, copying the POMs they need from ../shared/corpus
//	go run ./hack/parity -refresh  # regenerate every .expected with the oracle (make parity-refresh; -only PREFIX for some)
//	go run ./hack/parity -live     # run the oracle on every case; compare with the goldens and with prebake (make parity-live)
//	go run ./hack/parity -diff 300 -seed 1 -j 2 -report /tmp/diff.txt
//	                               # differential test: random coordinate sets from ../shared/corpus, oracle vs prebake's graph
//	go run ./hack/parity -diff 30 -seeds 1,2,3 # the same over several seeds (make parity-diff: the fixed CI set)
//	go run ./hack/parity -diff 30 -random 4    # over 4 fresh random seeds, printed to replay (make parity-fuzz SEEDS=4)
//	go run ./hack/parity -ivy 2.6.0 -diff 30   # any mode with another Ivy: the oracle runs that Ivy's jar, prebake follows it
//	go run ./hack/parity -ivy all -diff 30 -seeds 1,2
//	                               # -diff under each Ivy in turn: 2.5.1 (Spark 3.4's jar), 2.5.3 (4.3's),
//	                               # 2.6.0 (4.3's distribution with Ivy 2.6.0's, hack/infra.d/62-spark-ivy.sh)
//	go run ./hack/parity -ivyversions [-refresh] # testdata/parity/ivyversions under every Ivy prebake knows (NAME@VERSION.expected)
//
// The oracle's Ivy is Debian's 2.5.1 unless -ivy names one: then it runs
// the jar of the Spark distribution that ships it (pyspark 3.4.4 for
// 2.5.1, 4.3.0 for 2.5.3, and 4.3.0 with Ivy 2.6.0's jar for 2.6.0, under
// $PREBAKE_CI_CACHE: hack/infra.sh installs them), else Debian's 2.5.1 or
// the jar Maven put in ~/.m2 (mvn dependency:get
// -Dartifact=org.apache.ivy:ivy:VERSION), with Spark's settings as ever.
//
// A case's .repos lines use ${PARITY} for testdata/parity.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/prebake/prebake/resolver"
)

func main() {
	initF := flag.Bool("init", false, "create cases from hack/parity/cases.txt and copy the files they need")
	refresh := flag.Bool("refresh", false, "regenerate the golden .expected files with the oracle")
	live := flag.Bool("live", false, "run the oracle on every case and compare with the goldens and prebake")
	shared := flag.String("shared", "../shared", "the shared directory (corpus and oracle)")
	diff := flag.Int("diff", 0, "compare prebake with the oracle on this many random coordinate sets from the corpus")
	seed := flag.Int64("seed", 1, "random seed for -diff")
	seeds := flag.String("seeds", "", "with -diff: comma-separated seeds, -diff sets each (instead of -seed)")
	random := flag.Int("random", 0, "with -diff: this many fresh random seeds, -diff sets each (instead of -seed)")
	par := flag.Int("j", 2, "oracle runs in parallel for -diff")
	report := flag.String("report", "", "write the -diff report to this file")
	only := flag.String("only", "", "with -refresh/-live: only the cases whose name has this prefix")
	show := flag.String("show", "", "print prebake's jars, modules and evictions for these coordinates (-repos, -exclude)")
	showRepos := flag.String("repos", "", "with -show: comma-separated repository URLs")
	showExcl := flag.String("exclude", "", "with -show: exclusions")
	flag.StringVar(&ivyVersion, "ivy", "", "the Ivy the oracle runs and prebake follows: "+strings.Join(resolver.KnownIvyVersions, ", ")+", or all with -diff (default: the oracle's 2.5.1, prebake's default)")
	ivyVersions := flag.Bool("ivyversions", false, "run testdata/parity/ivyversions under every Ivy prebake knows: compare with NAME@VERSION.expected and prebake (-refresh: rewrite them)")
	flag.Parse()
	root, _ := os.Getwd()
	if abs, err := filepath.Abs(*shared); err == nil {
		*shared = abs
	}
	parity := filepath.Join(root, "testdata", "parity")
	oracle := filepath.Join(*shared, "oracle", "run-oracle.sh")
	var err error
	cleanup := func() {}
	if *ivyVersions {
		err = runIvyVersions(oracle, parity, *refresh)
		if err != nil {
			fmt.Fprintln(os.Stderr, "parity:", err)
			os.Exit(1)
		}
		return
	}
	if ivyVersion == "all" {
		if *diff == 0 {
			fmt.Fprintln(os.Stderr, "parity: -ivy all goes with -diff")
			os.Exit(64)
		}
		list, err := seedList(*seed, *seeds, *random)
		if err == nil {
			err = runDiffIvys(oracle, filepath.Join(*shared, "corpus"), resolver.KnownIvyVersions, *diff, list, *par, *report)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "parity:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "parity: ok")
		return
	}
	if err := useIvy(ivyVersion); err != nil {
		fmt.Fprintln(os.Stderr, "parity:", err)
		os.Exit(64)
	}
	if *diff > 0 || *refresh || *live {
		if cleanup, err = prepareOracle(oracle); err != nil {
			fmt.Fprintln(os.Stderr, "parity:", err)
			os.Exit(1)
		}
	}
	switch {
	case *show != "":
		err = showPrebake(*show, strings.Split(*showRepos, ","), *showExcl)
	case *diff > 0:
		var list []int64
		list, err = seedList(*seed, *seeds, *random)
		if err == nil {
			err = runDiffSeeds(oracle, filepath.Join(*shared, "corpus"), *diff, list, *par, *report)
		}
	case *initF:
		err = initCases(filepath.Join(root, "hack", "parity", "cases.txt"), filepath.Join(*shared, "corpus"), parity)
	case *refresh:
		err = forCases(parity, func(c kase) error {
			if !strings.HasPrefix(c.name, *only) {
				return nil
			}
			out, err := runOracle(oracle, c)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(parity, "cases", c.name+".expected"), []byte(out), 0o644)
		})
	case *live:
		var failed []string
		var mu sync.Mutex
		err = forCases(parity, func(c kase) error {
			if !strings.HasPrefix(c.name, *only) {
				return nil
			}
			out, err := runOracle(oracle, c)
			if err != nil {
				return err
			}
			golden, _ := os.ReadFile(filepath.Join(parity, "cases", c.name+".expected"))
			var problems []string
			if strings.TrimSpace(out) != strings.TrimSpace(string(golden)) {
				problems = append(problems, fmt.Sprintf("oracle output differs from the golden:\n--- golden\n%s--- oracle\n%s", golden, out))
			}
			if p := comparePrebake(c, out); p != "" {
				problems = append(problems, p)
			}
			if len(problems) > 0 {
				mu.Lock()
				failed = append(failed, c.name+": "+strings.Join(problems, "\n"))
				mu.Unlock()
			}
			return nil
		})
		if err == nil && len(failed) > 0 {
			sort.Strings(failed)
			err = fmt.Errorf("%d case(s) differ:\n%s", len(failed), strings.Join(failed, "\n"))
		}
	default:
		flag.Usage()
		os.Exit(64)
	}
	cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "parity:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "parity: ok")
}

type kase struct {
	name, coords, exclude string
	repos                 []string
}

func loadCases(parity string) ([]kase, error) {
	return loadCasesIn(parity, "cases")
}

// loadCasesIn reads the cases of parity/dir.
func loadCasesIn(parity, dir string) ([]kase, error) {
	files, err := filepath.Glob(filepath.Join(parity, dir, "*.coords"))
	if err != nil {
		return nil, err
	}
	var out []kase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".coords")
		read := func(ext string) string {
			b, _ := os.ReadFile(filepath.Join(parity, dir, name+ext))
			return strings.TrimSpace(string(b))
		}
		c := kase{name: name, coords: read(".coords"), exclude: read(".exclude")}
		for _, r := range strings.Split(read(".repos"), "\n") {
			if r = strings.TrimSpace(r); r != "" {
				c.repos = append(c.repos, strings.ReplaceAll(r, "${PARITY}", parity))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func forCases(parity string, fn func(kase) error) error {
	cases, err := loadCases(parity)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return errors.New("no cases in " + parity)
	}
	sem := make(chan struct{}, 2)
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := fn(c); err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prepareOracle compiles the oracle once, into a build directory of this
// process (ORACLE_BUILD_DIR, inherited by every run), before the runs go
// parallel. run-oracle.sh compiles on first use: two runs that both find no
// class both run javac into the same directory, and one loads the other's
// half-written IvyOracle.class ("Truncated class file", CI on a fresh
// machine). The returned func removes the directory.
func prepareOracle(oracle string) (func(), error) {
	dir, err := os.MkdirTemp("", "parity-oracle-")
	if err != nil {
		return nil, err
	}
	done := func() { os.RemoveAll(dir) }
	if err := os.Setenv("ORACLE_BUILD_DIR", dir); err != nil {
		done()
		return nil, err
	}
	// With no coordinates the oracle compiles, then exits with its usage
	// error; only the class file tells whether the compile worked.
	var errb bytes.Buffer
	cmd := exec.Command(oracle)
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	_ = cmd.Run()
	if _, err := os.Stat(filepath.Join(dir, "IvyOracle.class")); err != nil {
		done()
		return nil, fmt.Errorf("oracle: the compile left no class in %s: %s", dir, lastLines(errb.String(), 5))
	}
	return done, nil
}

// runOracle runs the oracle; exit codes 2–4 are resolution failures whose
// "error" lines are the expected output.
func runOracle(oracle string, c kase) (string, error) {
	args := []string{"--coords", c.coords, "--repos", strings.Join(c.repos, ",")}
	if c.exclude != "" {
		args = append(args, "--exclude", c.exclude)
	}
	cmd := exec.Command(oracle, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 2 && ee.ExitCode() <= 4 && strings.Contains(out.String(), "error ") {
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("oracle: %w: %s", err, lastLines(errb.String(), 5))
	}
	return out.String(), nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// comparePrebake resolves the case with prebake's real resolver (over
// file://, no default repositories) and compares with the oracle's jars.
func comparePrebake(c kase, oracleOut string) string {
	var want []string
	wantErr := false
	for _, l := range strings.Split(oracleOut, "\n") {
		if strings.HasPrefix(l, "jar ") {
			want = append(want, strings.TrimPrefix(l, "jar "))
		}
		if strings.HasPrefix(l, "error ") {
			wantErr = true
		}
	}
	cache, err := os.MkdirTemp("", "parity-cache-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(cache)
	req := resolver.Request{Packages: []string{c.coords}, Repositories: c.repos, NoDefaultRepositories: true, CacheDir: cache, ChecksumPolicy: resolver.ChecksumIgnore, IvyVersion: ivyVersion}
	if c.exclude != "" {
		req.Excludes = []string{c.exclude}
	}
	res, err := resolver.Resolve(context.Background(), req)
	if wantErr {
		if err == nil {
			return "oracle failed but prebake succeeded"
		}
		return ""
	}
	if err != nil {
		return "prebake failed: " + err.Error()
	}
	var got []string
	for _, a := range res.Lock.Artifacts {
		got = append(got, a.File)
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Sprintf("prebake jars differ:\n oracle  %v\n prebake %v", want, got)
	}
	return ""
}

// recorder wraps the resolver's real Source over the full corpus and
// records which module directories (and maven-metadata.xml files) a
// resolution touches.
type recorder struct {
	src     graphSource
	mu      sync.Mutex
	touched map[string]bool // absolute module version dirs
	files   map[string]bool // single files to copy (maven-metadata.xml)
}

// graphSource is what the graph builder uses of the real Source
// (dynamic revisions are picked per repository).
type graphSource interface {
	resolver.Source
	Repositories() []resolver.Repository
	VersionsIn(ctx context.Context, r resolver.Repository, group, artifact string) ([]string, error)
	POMIn(ctx context.Context, r resolver.Repository, group, artifact, version string) (*resolver.POMFile, error)
}

func newRecorder(ctx context.Context, repos []string, cacheDir string) (*recorder, error) {
	src, err := prebakeSource(ctx, repos, cacheDir)
	if err != nil {
		return nil, err
	}
	gs, ok := src.(graphSource)
	if !ok {
		return nil, fmt.Errorf("the resolver's Source %T does not list versions per repository", src)
	}
	return &recorder{src: gs, touched: map[string]bool{}, files: map[string]bool{}}, nil
}

// filePath is the local path of a file:// URL.
func filePath(u string) string {
	if p, err := url.Parse(u); err == nil && p.Scheme == "file" {
		return filepath.FromSlash(p.Path)
	}
	return ""
}

// touch records the module directory of the file at u.
func (r *recorder) touch(u string) {
	if p := filePath(u); p != "" {
		r.mu.Lock()
		r.touched[filepath.Dir(p)] = true
		r.mu.Unlock()
	}
}

// touchMetadata records repo's maven-metadata.xml of g:a, if it has one.
func (r *recorder) touchMetadata(repo resolver.Repository, g, a string) {
	dir := filePath(repo.URL)
	if dir == "" {
		return
	}
	f := filepath.Join(dir, strings.ReplaceAll(g, ".", "/"), a, "maven-metadata.xml")
	if _, err := os.Stat(f); err == nil {
		r.mu.Lock()
		r.files[f] = true
		r.mu.Unlock()
	}
}

func (r *recorder) Repositories() []resolver.Repository { return r.src.Repositories() }

func (r *recorder) POM(ctx context.Context, g, a, v string) (*resolver.POMFile, error) {
	pf, err := r.src.POM(ctx, g, a, v)
	if err == nil {
		r.touch(pf.URL)
	}
	return pf, err
}

func (r *recorder) POMIn(ctx context.Context, repo resolver.Repository, g, a, v string) (*resolver.POMFile, error) {
	pf, err := r.src.POMIn(ctx, repo, g, a, v)
	if err == nil {
		r.touch(pf.URL)
	}
	return pf, err
}

func (r *recorder) Artifact(ctx context.Context, ref resolver.ArtifactRef) (*resolver.CachedFile, error) {
	cf, err := r.src.Artifact(ctx, ref)
	if err == nil {
		r.touch(cf.URL)
	}
	return cf, err
}

func (r *recorder) Versions(ctx context.Context, g, a string) ([]string, error) {
	for _, repo := range r.src.Repositories() {
		r.touchMetadata(repo, g, a)
	}
	return r.src.Versions(ctx, g, a)
}

func (r *recorder) VersionsIn(ctx context.Context, repo resolver.Repository, g, a string) ([]string, error) {
	r.touchMetadata(repo, g, a)
	return r.src.VersionsIn(ctx, repo, g, a)
}

var repoDirs = map[string]string{"real": "repo-real", "m2": "repo-ivy-tests/m2", "pp": "repo-ivy-tests/parentPom", "deb": "repo-debian"}

// synthRepo is the hand-made repository testdata/parity/repos/synth (no
// copy from the corpus; cases.txt calls it "synth"); synth2, … are more
// hand-made repositories, for chains of several.
const synthRepo = "synth"

func initCases(spec, corpus, parity string) error {
	b, err := os.ReadFile(spec)
	if err != nil {
		return err
	}
	casesDir := filepath.Join(parity, "cases")
	if err := os.MkdirAll(casesDir, 0o755); err != nil {
		return err
	}
	cacheDir, err := os.MkdirTemp("", "parity-init-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheDir)
	ctx := context.Background()
	touched, files := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 4 {
			return fmt.Errorf("bad line %q", line)
		}
		name, coords, repos, exclude := f[0], f[1], strings.Split(f[2], ","), f[3]
		var urls, repoLines []string
		for _, short := range repos {
			d := filepath.Join(corpus, repoDirs[short])
			if strings.HasPrefix(short, synthRepo) {
				d = filepath.Join(parity, "repos", synthRepo)
			} else if repoDirs[short] == "" {
				return fmt.Errorf("%s: unknown repository %q", name, short)
			}
			urls = append(urls, "file://"+d+"/")
			repoLines = append(repoLines, "file://${PARITY}/repos/"+short+"/")
		}
		rec, err := newRecorder(ctx, urls, cacheDir)
		if err != nil {
			return err
		}
		_, err = prebakeGraph(ctx, rec, coords, exclude)
		fmt.Fprintf(os.Stderr, "%s: %d module dirs (err=%v)\n", name, len(rec.touched), err)
		for d := range rec.touched {
			touched[d] = true
		}
		for f := range rec.files {
			files[f] = true
		}
		write := func(ext, s string) error {
			return os.WriteFile(filepath.Join(casesDir, name+ext), []byte(s+"\n"), 0o644)
		}
		if err := write(".coords", coords); err != nil {
			return err
		}
		if err := write(".repos", strings.Join(repoLines, "\n")); err != nil {
			return err
		}
		if exclude != "" {
			if err := write(".exclude", exclude); err != nil {
				return err
			}
		}
	}
	// Copy the listed maven-metadata.xml files and the touched module
	// directories (POMs, jars, checksums); the synth repository stays.
	for f := range files {
		for short, rd := range repoDirs {
			base := filepath.Join(corpus, rd) + "/"
			if !strings.HasPrefix(f, base) || (short == "real" && strings.HasPrefix(f, filepath.Join(corpus, "repo-ivy-tests"))) {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			dst := filepath.Join(parity, "repos", short, strings.TrimPrefix(f, base))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				return err
			}
		}
	}
	// Copy the touched module directories (POMs, jars, checksums).
	for d := range touched {
		for short, rd := range repoDirs {
			base := filepath.Join(corpus, rd) + "/"
			if !strings.HasPrefix(d, base) || (short == "m2" && false) {
				continue
			}
			if short == "real" && strings.HasPrefix(d, filepath.Join(corpus, "repo-ivy-tests")) {
				continue
			}
			rel := strings.TrimPrefix(d, base)
			if err := copyDir(d, filepath.Join(parity, "repos", short, rel)); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			in.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
