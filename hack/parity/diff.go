package main

// -diff: differential testing of prebake's graph builder, over the
// resolver's real Source (prebakeSource), against the real Ivy oracle on
// coordinate sets picked at random from ../shared/corpus.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

type module struct{ repo, g, a, v string }

func (m module) coord() string { return m.g + ":" + m.a + ":" + m.v }

// scanRepo lists the modules of a Maven-layout directory (every
// g/../a/v/a-v.pom).
func scanRepo(short, dir string) ([]module, error) {
	var out []module
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pom") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) < 4 {
			return nil
		}
		v, a := parts[len(parts)-2], parts[len(parts)-3]
		if filepath.Base(p) != a+"-"+v+".pom" {
			return nil
		}
		out = append(out, module{repo: short, g: strings.Join(parts[:len(parts)-3], "."), a: a, v: v})
		return nil
	})
	return out, err
}

// genSets picks n coordinate sets: single modules, pairs/triples of one
// groupId, two or three versions of one module, and a module plus another
// version of something in its closure.
func genSets(ctx context.Context, corpus, cacheDir string, n int, rng *rand.Rand) ([]kase, error) {
	byRepo := map[string][]module{}
	for _, short := range []string{"real", "m2", "pp", "deb"} {
		ms, err := scanRepo(short, filepath.Join(corpus, repoDirs[short]))
		if err != nil {
			return nil, err
		}
		byRepo[short] = ms
	}
	weights := []string{"deb", "deb", "deb", "deb", "real", "real", "m2", "pp"}
	var out []kase
	seen := map[string]bool{}
	for tries := 0; len(out) < n && tries < n*50; tries++ {
		short := weights[rng.Intn(len(weights))]
		ms := byRepo[short]
		pick := func() module { return ms[rng.Intn(len(ms))] }
		var coords []string
		kind := rng.Intn(5)
		first := pick()
		switch kind {
		case 0: // single
			coords = []string{first.coord()}
		case 1: // same groupId, 2 or 3 modules
			var same []module
			for _, m := range ms {
				if m.g == first.g && m != first {
					same = append(same, m)
				}
			}
			if len(same) == 0 {
				continue
			}
			coords = []string{first.coord()}
			for i := 0; i < 1+rng.Intn(2) && len(same) > 0; i++ {
				coords = append(coords, same[rng.Intn(len(same))].coord())
			}
		case 2: // versions of one module
			var vs []module
			for _, m := range ms {
				if m.g == first.g && m.a == first.a && m != first {
					vs = append(vs, m)
				}
			}
			if len(vs) == 0 {
				continue
			}
			coords = []string{first.coord(), vs[rng.Intn(len(vs))].coord()}
			if rng.Intn(3) == 0 {
				coords = append(coords, vs[rng.Intn(len(vs))].coord())
			}
		default: // module + another version of something in its closure, or two modules sharing a dependency
			src, err := prebakeSource(ctx, []string{corpusURL(corpus, short)}, cacheDir)
			if err != nil {
				return nil, err
			}
			g, err := prebakeGraph(ctx, src, first.coord(), "")
			if err != nil || len(g.Modules) < 2 {
				continue
			}
			var other []string
			var sharing []string
			for _, mod := range g.Modules {
				p := strings.Split(mod, ":")
				if mod == first.coord() {
					continue
				}
				for _, m := range ms {
					if m.g == p[0] && m.a == p[1] && m.v != p[2] {
						other = append(other, m.coord())
					}
					if m.g == p[0] && m.a == p[1] && m.v == p[2] {
						sharing = append(sharing, mod)
					}
				}
			}
			switch {
			case kind == 3 && len(other) > 0:
				coords = []string{first.coord(), other[rng.Intn(len(other))]}
			case len(sharing) > 0:
				// a module that depends on the same thing: a dependency of first plus first
				coords = []string{first.coord(), sharing[rng.Intn(len(sharing))]}
			default:
				continue
			}
			if rng.Intn(2) == 0 {
				coords[0], coords[1] = coords[1], coords[0]
			}
		}
		key := short + "|" + strings.Join(coords, ",")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, kase{name: fmt.Sprintf("diff-%03d", len(out)), coords: strings.Join(coords, ","),
			repos: []string{corpusURL(corpus, short)}})
	}
	return out, nil
}

func corpusURL(corpus, short string) string {
	return "file://" + filepath.Join(corpus, repoDirs[short]) + "/"
}

// prebakeSource is the resolver's real Source (the one Resolve builds)
// over the file:// repositories repos alone: no default repositories,
// offline, checksums ignored as in -live, with its cache in cacheDir.
func prebakeSource(ctx context.Context, repos []string, cacheDir string) (resolver.Source, error) {
	return resolver.NewSource(ctx, resolver.Request{
		Repositories:          repos,
		NoDefaultRepositories: true,
		Offline:               true,
		CacheDir:              cacheDir,
		ChecksumPolicy:        resolver.ChecksumIgnore,
	})
}

// prebakeGraph builds the graph of coords through src.
func prebakeGraph(ctx context.Context, src resolver.Source, coords, exclude string) (*resolver.Graph, error) {
	req := resolver.Request{Packages: []string{coords}, IvyVersion: ivyVersion}
	if exclude != "" {
		req.Excludes = []string{exclude}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return resolver.BuildGraph(ctx, req, src, nil)
}

// prebakeJars is the graph's jar list (with the graph), or an error when
// Ivy's retrieve would fail (a missing artifact).
func prebakeJars(ctx context.Context, c kase, cacheDir string) ([]string, *resolver.Graph, error) {
	src, err := prebakeSource(ctx, c.repos, cacheDir)
	if err != nil {
		return nil, nil, err
	}
	g, err := prebakeGraph(ctx, src, c.coords, c.exclude)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, a := range g.Artifacts {
		if _, err := src.Artifact(ctx, a); err != nil {
			return nil, nil, err
		}
		names = append(names, repo.SparkFileName(a.Group, a.Artifact, a.Version, a.Classifier, a.Ext))
	}
	sort.Strings(names)
	return names, g, nil
}

func oracleJars(out string) (jars []string, failed bool) {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "jar ") {
			jars = append(jars, strings.TrimPrefix(l, "jar "))
		}
		if strings.HasPrefix(l, "error ") {
			failed = true
		}
	}
	return jars, failed
}

// seedList is -seed, or -seeds' list, or -random fresh seeds (from the
// clock, printed so that a mismatch can be replayed with -seed).
func seedList(seed int64, seeds string, random int) ([]int64, error) {
	switch {
	case seeds != "" && random > 0:
		return nil, errors.New("-seeds and -random exclude each other")
	case seeds != "":
		var out []int64
		for _, f := range strings.Split(seeds, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("-seeds: %q is not an integer", f)
			}
			out = append(out, v)
		}
		return out, nil
	case random > 0:
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		out := make([]int64, random)
		for i := range out {
			out[i] = 1_000_000 + rng.Int63n(1_000_000_000)
		}
		fmt.Fprintf(os.Stderr, "diff: fresh seeds %s\n", joinSeeds(out))
		return out, nil
	}
	return []int64{seed}, nil
}

func joinSeeds(seeds []int64) string {
	var s []string
	for _, v := range seeds {
		s = append(s, strconv.FormatInt(v, 10))
	}
	return strings.Join(s, ",")
}

// runDiffSeeds runs runDiff for each seed (n sets each), appends the
// reports and prints the total; any mismatch is an error.
func runDiffSeeds(oracle, corpus string, n int, seeds []int64, par int, report string) error {
	cacheDir, err := os.MkdirTemp("", "parity-diff-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheDir)
	var all strings.Builder
	sets, bad := 0, 0
	for _, seed := range seeds {
		ran, b, text, err := runDiff(oracle, corpus, cacheDir, n, seed, par)
		if err != nil {
			return fmt.Errorf("seed %d: %w", seed, err)
		}
		sets += ran
		bad += b
		all.WriteString(text)
	}
	if len(seeds) > 1 {
		total := fmt.Sprintf("total: compared %d sets over %d seeds (%s), %d match, %d mismatch\n", sets, len(seeds), joinSeeds(seeds), sets-bad, bad)
		all.WriteString(total)
		fmt.Print(total)
	}
	if report != "" {
		if err := os.WriteFile(report, []byte(all.String()), 0o644); err != nil {
			return err
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d mismatch(es) in %d sets (seeds %s)", bad, sets, joinSeeds(seeds))
	}
	return nil
}

// runDiff generates the sets, runs both sides in a bounded pool and prints
// the mismatches; it returns the number of sets, of mismatches and the
// report text.
func runDiff(oracle, corpus, cacheDir string, n int, seed int64, par int) (int, int, string, error) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	sets, err := genSets(ctx, corpus, cacheDir, n, rng)
	if err != nil {
		return 0, 0, "", err
	}
	type result struct {
		c    kase
		diff string
	}
	results := make([]result, len(sets))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var done int
	var mu sync.Mutex
	for i, c := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := runOracle(oracle, c)
			r := result{c: c}
			if err != nil {
				r.diff = "oracle error: " + err.Error()
			} else {
				want, wantErr := oracleJars(out)
				got, _, gotErr := prebakeJars(ctx, c, cacheDir)
				switch {
				case wantErr && gotErr == nil:
					r.diff = fmt.Sprintf("oracle failed, prebake succeeded\n oracle: %s\n prebake: %v", strings.TrimSpace(out), got)
				case !wantErr && gotErr != nil:
					r.diff = fmt.Sprintf("prebake failed: %v\n oracle: %v", gotErr, want)
				case !wantErr && strings.Join(want, " ") != strings.Join(got, " "):
					r.diff = fmt.Sprintf("jars differ\n oracle  %v\n prebake %v", want, got)
				}
			}
			results[i] = r
			mu.Lock()
			done++
			if done%25 == 0 {
				fmt.Fprintf(os.Stderr, "diff: %d/%d\n", done, len(sets))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	var b strings.Builder
	bad := 0
	for _, r := range results {
		if r.diff == "" {
			continue
		}
		bad++
		fmt.Fprintf(&b, "== %s|%s|%s|%s\n%s\n", r.c.name, r.c.coords, shortRepos(corpus, r.c.repos), r.c.exclude, r.diff)
	}
	fmt.Fprintf(&b, "compared %d sets, %d match, %d mismatch (seed %d)\n", len(results), len(results)-bad, bad, seed)
	fmt.Print(b.String())
	return len(results), bad, b.String(), nil
}

func shortRepos(corpus string, repos []string) string {
	var out []string
	for _, r := range repos {
		for short := range repoDirs {
			if r == corpusURL(corpus, short) {
				r = short
			}
		}
		out = append(out, r)
	}
	return strings.Join(out, ",")
}

// showPrebake prints prebake's result in the oracle's --detail format.
func showPrebake(coords string, repos []string, exclude string) error {
	cacheDir, err := os.MkdirTemp("", "parity-show-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheDir)
	jars, g, err := prebakeJars(context.Background(), kase{coords: coords, repos: repos, exclude: exclude}, cacheDir)
	if err != nil {
		return err
	}
	for _, j := range jars {
		fmt.Println("jar", j)
	}
	for _, m := range g.Modules {
		fmt.Println("module", m)
	}
	for _, e := range g.Evicted {
		fmt.Printf("evicted %s:%s:%s by %s\n", e.Group, e.Artifact, e.Version, e.By)
	}
	return nil
}
