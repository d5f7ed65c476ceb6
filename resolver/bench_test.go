package resolver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/maven"
)

// The benchmarks resolve a realistic graph (netty-all 4.1.48 and
// jackson-dataformat-xml 2.14.0 from Debian's POMs: 28 jars, 62 files, parent
// chains and imported BOMs) from testdata/repo, served by a repository that
// sleeps benchRTT before each answer and counts requests.
const benchRTT = 20 * time.Millisecond

var benchPackages = []string{"io.netty:netty-all:4.1.48.Final", jacksonXML.coord}

// BenchmarkColdResolve reports the cold resolve's wall time against
// depth × RTT, where depth is the critical path of sequential fetches of the
// graph (parent and BOM chains plus the dependency levels plus the jar
// round), computed from the POMs (graphDepth). Target: ≤ 1.2.
func BenchmarkColdResolve(b *testing.B) {
	srv := mavenhttp.New("testdata/repo", mavenhttp.WithDelay(benchRTT))
	defer srv.Close()
	var elapsed time.Duration
	var res *Result
	for i := 0; i < b.N; i++ {
		req := benchRequest(srv.URL(), b.TempDir(), "")
		start := time.Now()
		r, err := Resolve(context.Background(), req, WithDefaultChain("", ""), WithMaxPerHost(128))
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		res = r
	}
	cold := elapsed / time.Duration(b.N)
	if os.Getenv("PREBAKE_BENCH_TIMELINE") != "" {
		log := srv.Log()
		for _, e := range log {
			b.Logf("%6.1fms %s", float64(e.At.Sub(log[0].At).Microseconds())/1000, e.Path)
		}
	}
	depth := graphDepth(b, res.Graph)
	ratio := float64(cold) / float64(time.Duration(depth)*benchRTT)
	b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
	b.ReportMetric(float64(depth), "depth")
	b.ReportMetric(float64(srv.Requests())/float64(b.N), "requests")
	b.ReportMetric(ratio, "cold/depth×RTT")
	b.Logf("cold %s for %d jars, depth %d × %s = %s: ratio %.2f (target ≤ 1.2), %d requests",
		cold, len(res.Lock.Artifacts), depth, benchRTT, time.Duration(depth)*benchRTT, ratio, srv.Requests()/int64(b.N))
	if ratio > 1.2 {
		b.Errorf("cold resolve %.2f× depth×RTT, want ≤ 1.2", ratio)
	}
}

// BenchmarkColdVsIvy runs the Ivy oracle (Spark 3.5's Ivy 2.5.1 with
// Spark's settings) and prebake on the same delayed repository. Target:
// prebake ≥ 10× faster.
func BenchmarkColdVsIvy(b *testing.B) {
	testenv.RequireIT(b)
	oracle := filepath.Join(testenv.SharedDir(b, ".."), "oracle", "run-oracle.sh")
	srv := mavenhttp.New("testdata/repo", mavenhttp.WithDelay(benchRTT))
	defer srv.Close()
	var ours, ivy time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Resolve(context.Background(), benchRequest(srv.URL(), b.TempDir(), ""), WithDefaultChain("", ""))
		ours += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(oracle, "--coords", strings.Join(benchPackages, ","), "--repos", srv.URL())
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		start = time.Now()
		err = cmd.Run()
		ivy += time.Since(start)
		if err != nil {
			b.Fatalf("oracle: %v\n%s", err, stderr.String())
		}
		var want, got []string
		for _, l := range strings.Split(out.String(), "\n") {
			if f, ok := strings.CutPrefix(l, "jar "); ok {
				want = append(want, f)
			}
		}
		for _, a := range res.Lock.Artifacts {
			got = append(got, a.File)
		}
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			b.Errorf("prebake and Ivy disagree:\nivy:     %v\nprebake: %v", want, got)
		}
	}
	speedup := float64(ivy) / float64(ours)
	b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "prebake-ms")
	b.ReportMetric(float64(ivy.Milliseconds())/float64(b.N), "ivy-ms")
	b.ReportMetric(speedup, "ivy/prebake")
	b.Logf("prebake %s, Ivy oracle %s: %.1f× faster (target ≥ 10×)", ours/time.Duration(b.N), ivy/time.Duration(b.N), speedup)
	if speedup < 10 {
		b.Errorf("prebake only %.1f× faster than Ivy, want ≥ 10×", speedup)
	}
}

// BenchmarkWarmResolve runs the built binary, `prebake resolve --lock …
// --cache …`, with a matching lock and a filled cache: process wall time
// ≤ 50 ms and zero requests (the server's counter).
func BenchmarkWarmResolve(b *testing.B) {
	testenv.RequireIT(b)
	srv := mavenhttp.New("testdata/repo", mavenhttp.WithDelay(benchRTT))
	defer srv.Close()
	dir := b.TempDir()
	lock := filepath.Join(dir, "prebake.lock")
	cache := filepath.Join(dir, "cache")
	if _, err := Resolve(context.Background(), benchRequest(srv.URL(), cache, lock), WithDefaultChain("", "")); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "prebake")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/prebake").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	args := []string{"resolve", "--no-default-repositories", "--repositories", srv.URL(), "--lock", lock, "--cache", cache, "-o", "names"}
	for _, p := range benchPackages {
		args = append(args, "--packages", p)
	}
	// One untimed run warms the page cache for the binary.
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		b.Fatalf("prebake %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	srv.Reset()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, args...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		start := time.Now()
		err := cmd.Run()
		total += time.Since(start)
		if err != nil {
			b.Fatalf("prebake: %v\n%s", err, stderr.String())
		}
		if n := strings.Count(strings.TrimSpace(out.String()), "\n") + 1; n != 28 {
			b.Errorf("warm resolve printed %d names, want 28:\n%s", n, out.String())
		}
	}
	warm := total / time.Duration(b.N)
	reqs := srv.Requests()
	b.ReportMetric(float64(warm.Microseconds())/1000, "warm-ms")
	b.ReportMetric(float64(reqs), "requests")
	b.Logf("warm resolve (process wall, %s/%s): %s, %d requests", runtime.GOOS, runtime.GOARCH, warm, reqs)
	if reqs != 0 {
		b.Errorf("warm resolve made %d requests, want 0", reqs)
	}
	if warm > 50*time.Millisecond {
		b.Errorf("warm resolve took %s, want ≤ 50ms", warm)
	}
}

func benchRequest(repo, cache, lock string) Request {
	return Request{
		Packages:              benchPackages,
		Repositories:          []string{repo},
		NoDefaultRepositories: true,
		CacheDir:              cache,
		LockPath:              lock,
	}
}

// graphDepth is the critical path of sequential fetches for g: along the
// resolved tree, each module costs 1 + its parent chain + its longest
// imported-BOM chain (a parent is only known once the child's POM arrived;
// imports once the parents are known); one more round fetches the jars. It
// reads the POMs from testdata/repo with maven.Parse.
func graphDepth(tb testing.TB, g *Graph) int {
	memo := map[string]int{}
	var chain func(gr, a, v string, props map[string]string, seen int) int
	chain = func(gr, a, v string, props map[string]string, seen int) int {
		key := gr + ":" + a + ":" + v
		if d, ok := memo[key]; ok {
			return d
		}
		if seen > 50 {
			return 0
		}
		data, err := os.ReadFile(filepath.Join("testdata/repo", modulePath(gr, a, v), artifactFileName(a, v, "", "pom")))
		if err != nil {
			return 1 // a 404 still costs a round
		}
		p, err := maven.Parse(data)
		if err != nil {
			return 1
		}
		own := map[string]string{"project.version": v, "pom.version": v, "version": v}
		if p.Properties != nil {
			for k, x := range p.Properties.Entries {
				own[k] = x
			}
		}
		for k, x := range props {
			if _, ok := own[k]; !ok {
				own[k] = x
			}
		}
		d := 1
		if pp := p.Parent; pp != nil && pp.ArtifactID != nil && pp.GroupID != nil && pp.Version != nil {
			d += chain(*pp.GroupID, *pp.ArtifactID, *pp.Version, nil, seen+1)
		}
		best := 0
		if dm := p.DependencyManagement; dm != nil && dm.Dependencies != nil {
			for _, dep := range *dm.Dependencies {
				if dep.Scope == nil || *dep.Scope != "import" || dep.GroupID == nil || dep.ArtifactID == nil || dep.Version == nil {
					continue
				}
				ver, err := maven.Interpolate(*dep.Version, own)
				if err != nil || strings.Contains(ver, "${") {
					continue
				}
				best = max(best, chain(*dep.GroupID, *dep.ArtifactID, ver, nil, seen+1))
			}
		}
		memo[key] = d + best
		return d + best
	}
	var depth func(n *Node, level int) int
	depth = func(n *Node, level int) int {
		if level > 100 {
			return 0
		}
		own := chain(n.Group, n.Artifact, n.Version, nil, 0)
		best := 0
		for _, c := range n.Children {
			best = max(best, depth(c, level+1))
		}
		return own + best
	}
	d := 0
	for _, r := range g.Roots {
		d = max(d, depth(r, 0))
	}
	if d == 0 {
		tb.Fatalf("graph depth 0: %s", fmt.Sprint(g.Roots))
	}
	return d + 1 // the jar round
}
