package resolver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// chainSource is an in-memory Source serving a linear chain of modules
// ev.chain:c0 → c1 → … → c(n-1), one jar each (unit tests and benchmarks:
// the graph builder's cost without any I/O).
type chainSource struct{ n int }

var chainRepo = Repository{Name: "repo-1", URL: "mem://chain/"}

func (s chainSource) Repositories() []Repository { return []Repository{chainRepo} }

func (s chainSource) POM(_ context.Context, g, a, v string) (*POMFile, error) {
	i, err := strconv.Atoi(strings.TrimPrefix(a, "c"))
	if g != "ev.chain" || err != nil || i < 0 || i >= s.n || v != "1" {
		return nil, fmt.Errorf("module %s:%s:%s: %w", g, a, v, ErrNotFound)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<project><modelVersion>4.0.0</modelVersion><groupId>ev.chain</groupId><artifactId>c%d</artifactId><version>1</version>`, i)
	if i+1 < s.n {
		fmt.Fprintf(&b, `<dependencies><dependency><groupId>ev.chain</groupId><artifactId>c%d</artifactId><version>1</version></dependency></dependencies>`, i+1)
	}
	b.WriteString(`</project>`)
	return &POMFile{Data: []byte(b.String()), Repo: chainRepo, URL: chainRepo.URL + a}, nil
}

func (s chainSource) Artifact(_ context.Context, ref ArtifactRef) (*CachedFile, error) {
	return &CachedFile{Path: "/nonexistent/" + ref.Artifact, Size: 1, URL: chainRepo.URL + ref.Artifact}, nil
}

func (s chainSource) Versions(context.Context, string, string) ([]string, error) {
	return []string{"1"}, nil
}

func buildDeepChain(tb testing.TB, n int, conflict Conflict) *Graph {
	tb.Helper()
	g, err := BuildGraph(context.Background(), Request{Packages: []string{"ev.chain:c0:1"}, Conflict: conflict}, chainSource{n}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if len(g.Artifacts) != n {
		tb.Fatalf("chain of %d: %d artifacts", n, len(g.Artifacts))
	}
	return g
}

// BenchmarkDeepChain resolves linear chains of 250, 1,000 and 3,000 modules
// side by side: the time per level must stay flat (linear resolution, see
// graph_frames.go). BenchmarkDeepChainVsIvy compares with the real Ivy.
func BenchmarkDeepChain(b *testing.B) {
	for _, n := range []int{250, 1000, 3000} {
		for _, conflict := range []Conflict{ConflictLatest, ConflictNearest} {
			b.Run(fmt.Sprintf("levels=%d/%s", n, conflict), func(b *testing.B) {
				b.ReportAllocs() // memory: B/op
				var total, cpu time.Duration
				for range b.N {
					t0, c0 := time.Now(), cpuTime()
					buildDeepChain(b, n, conflict)
					total += time.Since(t0)
					cpu += cpuTime() - c0
				}
				// CPU time too: on a shared machine the wall time says little.
				b.ReportMetric(float64(total.Microseconds())/float64(b.N)/float64(n), "µs/level")
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/level")
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}
