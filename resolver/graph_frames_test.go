package resolver

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// randSource is an in-memory repository of random POMs: modules g:m0 …
// g:m(K-1), each in versions 1…3, depending on later modules (and now and
// then on an earlier one: cycles) in random versions and scopes, with
// optional dependencies, exclusions, dependencyManagement, and long
// chains of modules with one version that end in a conflict (the lazy
// walks' materialization).
type randSource struct {
	poms map[string]string
}

func (s *randSource) POM(_ context.Context, g, a, v string) (*POMFile, error) {
	p, ok := s.poms[g+":"+a+":"+v]
	if !ok {
		return nil, fmt.Errorf("module %s:%s:%s: %w", g, a, v, ErrNotFound)
	}
	return &POMFile{Data: []byte(p), Repo: chainRepo, URL: chainRepo.URL + a}, nil
}

func (s *randSource) Artifact(_ context.Context, ref ArtifactRef) (*CachedFile, error) {
	return &CachedFile{Path: "/nonexistent/" + ref.Artifact, Size: 1, URL: chainRepo.URL + ref.Artifact}, nil
}

func (s *randSource) Versions(context.Context, string, string) ([]string, error) {
	return []string{"1", "2", "3"}, nil
}

func (s *randSource) Repositories() []Repository { return []Repository{chainRepo} }

func newRandSource(rng *rand.Rand) (*randSource, []string) {
	k := 8 + rng.Intn(25)
	chain := 0
	if rng.Intn(3) == 0 {
		chain = 20 + rng.Intn(80)
	}
	s := &randSource{poms: map[string]string{}}
	mod := func(i int) string {
		if i >= k {
			return "c" + strconv.Itoa(i-k)
		}
		return "m" + strconv.Itoa(i)
	}
	scopes := []string{"", "", "", "compile", "runtime", "test", "provided"}
	for i := 0; i < k+chain; i++ {
		for v := 1; v <= 3; v++ {
			var deps, managed strings.Builder
			n := rng.Intn(4)
			if i >= k { // a chain link: the next link, at the end back into the modules
				n = 1
			}
			for range n {
				j := i + 1 + rng.Intn(k+chain-i)
				if i < k && rng.Intn(8) == 0 {
					j = rng.Intn(k) // a cycle, maybe
				}
				if i >= k && i+1 < k+chain {
					j = i + 1
				}
				if j >= k+chain {
					j = rng.Intn(k)
				}
				dv := 1 + rng.Intn(3)
				if i >= k {
					dv = 1
				}
				if i == k+chain-1 {
					dv = 1 + rng.Intn(3)
				}
				fmt.Fprintf(&deps, "<dependency><groupId>g</groupId><artifactId>%s</artifactId><version>%d</version>", mod(j), dv)
				if sc := scopes[rng.Intn(len(scopes))]; sc != "" && i < k {
					fmt.Fprintf(&deps, "<scope>%s</scope>", sc)
				}
				if rng.Intn(10) == 0 {
					deps.WriteString("<optional>true</optional>")
				}
				if rng.Intn(8) == 0 {
					fmt.Fprintf(&deps, "<exclusions><exclusion><groupId>g</groupId><artifactId>%s</artifactId></exclusion></exclusions>", mod(rng.Intn(k)))
				}
				deps.WriteString("</dependency>")
			}
			if rng.Intn(6) == 0 {
				fmt.Fprintf(&managed, "<dependencyManagement><dependencies><dependency><groupId>g</groupId><artifactId>%s</artifactId><version>%d</version></dependency></dependencies></dependencyManagement>",
					mod(rng.Intn(k+chain)), 1+rng.Intn(3))
			}
			s.poms[fmt.Sprintf("g:%s:%d", mod(i), v)] = fmt.Sprintf(
				`<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>%s</artifactId><version>%d</version>%s<dependencies>%s</dependencies></project>`,
				mod(i), v, managed.String(), deps.String())
		}
	}
	var roots []string
	for range 1 + rng.Intn(3) {
		roots = append(roots, fmt.Sprintf("g:%s:%d", mod(rng.Intn(k)), 1+rng.Intn(3)))
	}
	if chain > 0 {
		roots = append(roots, fmt.Sprintf("g:%s:1", mod(k)))
	}
	return s, roots
}

// TestLazyWalksAreIvysWalks: the lazy walks of graph_frames.go give the
// graph the literal replay of Ivy's walks gives (which the parity goldens
// and the differential run check against the real Ivy), on random graphs
// with conflicts, cycles, scopes, exclusions, dependencyManagement and
// long chains.
func TestLazyWalksAreIvysWalks(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 30
	}
	if n, err := strconv.Atoi(os.Getenv("PREBAKE_LAZY_SEEDS")); err == nil && n > 0 {
		seeds = n // a longer look
	}
	evictions, failures := 0, 0
	start := time.Now()
	for seed := range seeds {
		rng := rand.New(rand.NewSource(int64(seed)))
		src, roots := newRandSource(rng)
		req := Request{Packages: []string{strings.Join(roots, ",")}}
		if os.Getenv("PREBAKE_LAZY_TRACE") != "" {
			fmt.Fprintln(os.Stderr, "seed", seed, "literal")
		}
		lit, lerr := buildIvyGraph(context.Background(), req, src, nil, true)
		if os.Getenv("PREBAKE_LAZY_TRACE") != "" {
			fmt.Fprintln(os.Stderr, "seed", seed, "lazy")
		}
		lazy, err := buildIvyGraph(context.Background(), req, src, nil, false)
		if fmt.Sprint(lerr) != fmt.Sprint(err) {
			t.Fatalf("seed %d (%v): errors differ: literal %v, lazy %v", seed, roots, lerr, err)
		}
		if lit == nil || lazy == nil {
			failures++
			continue
		}
		if len(lit.Evicted) > 0 {
			evictions++
		}
		for _, c := range []struct {
			what      string
			lit, lazy any
		}{
			{"jars", lit.Artifacts, lazy.Artifacts},
			{"modules", lit.Modules, lazy.Modules},
			{"evictions", lit.Evicted, lazy.Evicted},
			{"tree", renderTree(lit.Roots), renderTree(lazy.Roots)},
		} {
			if d := cmp.Diff(c.lit, c.lazy); d != "" {
				t.Fatalf("seed %d (%v): %s differ (-literal +lazy):\n%s", seed, roots, c.what, d)
			}
		}
	}
	t.Logf("%d random graphs (%d with evictions, %d failing alike) in %v", seeds, evictions, failures, time.Since(start))
}

func renderTree(nodes []*Node) []string {
	var out []string
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		out = append(out, fmt.Sprintf("%*s%s:%s:%s evicted=%v by=%s", depth, "", n.Group, n.Artifact, n.Version, n.Evicted, n.By))
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, n := range nodes {
		walk(n, 0)
	}
	return out
}
