package resolver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/resolver/repo"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/maven"
)

// The benchmarks resolve a realistic graph (netty-all 4.1.48 and
// jackson-dataformat-xml 2.14.0 from Debian's POMs: 28 jars, 62 files, parent
// chains and imported BOMs) from testdata/repo, served by a repository that
// sleeps benchRTT before each answer and counts requests.
// PREBAKE_BENCH_RTT (a Go duration) replaces the default 20ms: a longer
// RTT makes a loaded machine's scheduling delays small beside it.
var benchRTT = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("PREBAKE_BENCH_RTT")); err == nil && d > 0 {
		return d
	}
	return 20 * time.Millisecond
}()

var benchPackages = []string{"io.netty:netty-all:4.1.48.Final", jacksonXML.coord}

// BenchmarkColdResolve reports the cold resolve's wall time against
// depth × RTT, with the checksum files as Maven Central serves them (a .sha1
// beside every .pom and .jar of testdata/repo; the default policy, warn) and
// without any (the server answers 404 for them; under warn, whose fallback
// then asks .sha256 and .md5, and under ignore, which asks none). Depth is
// the critical path of sequential fetches of the graph (parent and BOM
// chains plus the dependency levels plus the jar round), computed from the
// POMs (graphDepth). Requests and sequential rounds are counted by the
// server (mavenhttp.Server.Rounds: the longest chain of requests each
// arriving after the previous one was answered). Target: ≤ 1.2 × depth × RTT
// and rounds ≤ depth, for each variant.
func BenchmarkColdResolve(b *testing.B) {
	for _, v := range []struct {
		name   string
		sums   bool
		policy ChecksumPolicy
	}{
		{"sums/warn", true, ChecksumWarn},
		{"nosums/warn", false, ChecksumWarn},
		{"nosums/ignore", false, ChecksumIgnore},
	} {
		b.Run(v.name, func(b *testing.B) { coldResolve(b, v.sums, v.policy) })
	}
}

func coldResolve(b *testing.B, sums bool, policy ChecksumPolicy) {
	opts := []mavenhttp.Option{mavenhttp.WithDelay(benchRTT)}
	if !sums {
		opts = append(opts, mavenhttp.WithoutChecksums())
	}
	srv := mavenhttp.New("testdata/repo", opts...)
	defer srv.Close()
	var elapsed time.Duration
	var res *Result
	var requests, checksums, rounds int
	for i := 0; i < b.N; i++ {
		req := benchRequest(srv.URL(), b.TempDir(), "")
		req.ChecksumPolicy = policy
		srv.Reset()
		start := time.Now()
		r, err := Resolve(context.Background(), req)
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		res = r
		timeline := srv.Timeline()
		requests, checksums, rounds = len(timeline), 0, 0
		for _, e := range timeline {
			if mavenhttp.IsChecksum(e.Path) {
				checksums++
			}
			rounds = max(rounds, e.Round)
			if os.Getenv("PREBAKE_BENCH_TIMELINE") != "" {
				b.Logf("%6.1f–%6.1fms round %d %s", ms(e.At.Sub(start)), ms(e.End.Sub(start)), e.Round, e.Path)
			}
		}
	}
	cold := elapsed / time.Duration(b.N)
	depth := graphDepth(b, "testdata/repo", res.Graph)
	ratio := float64(cold) / float64(time.Duration(depth)*benchRTT)
	load, _ := os.ReadFile("/proc/loadavg")
	b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
	b.ReportMetric(float64(depth), "depth")
	b.ReportMetric(float64(rounds), "rounds")
	b.ReportMetric(float64(requests), "requests")
	b.ReportMetric(float64(checksums), "checksum-requests")
	b.ReportMetric(ratio, "cold/depth×RTT")
	b.Logf("cold %s for %d jars, depth %d × %s = %s: ratio %.2f (target ≤ 1.2), %d requests (%d for checksums) in %d sequential rounds; loadavg %s",
		cold, len(res.Lock.Artifacts), depth, benchRTT, time.Duration(depth)*benchRTT, ratio, requests, checksums, rounds, strings.TrimSpace(string(load)))
	if policy == ChecksumIgnore && checksums > 0 {
		b.Errorf("%d checksum requests under --checksum-policy ignore, want none", checksums)
	}
	if rounds > depth {
		b.Errorf("the requests took %d sequential rounds, more than the graph's depth %d", rounds, depth)
	}
	if ratio > 1.2 {
		b.Errorf("cold resolve %.2f× depth×RTT, want ≤ 1.2", ratio)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
		res, err := Resolve(context.Background(), benchRequest(srv.URL(), b.TempDir(), ""))
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
	if _, err := Resolve(context.Background(), benchRequest(srv.URL(), cache, lock)); err != nil {
		b.Fatal(err)
	}
	bin := testenv.Prebake(b)
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

// graphDepth is the critical path of sequential fetches for g, in round
// trips, by an earliest-start simulation over the POMs in testdata/repo
// (read with maven.Peek from the repository directory root): a module's POM can be requested once something
// names it; its parent once its POM arrived; its imported BOMs once its
// parent chain is known; its dependencies (the resolved tree's children)
// once its effective POM is ready. Each file is fetched once (merged
// requests). One more round fetches the jars.
func graphDepth(tb testing.TB, root string, g *Graph) int {
	type pomInfo struct {
		parent  string
		imports []string
	}
	infos := map[string]*pomInfo{}
	info := func(key string) *pomInfo {
		if in, ok := infos[key]; ok {
			return in
		}
		in := &pomInfo{}
		infos[key] = in
		f := strings.Split(key, ":")
		data, err := os.ReadFile(filepath.Join(root, repo.ModulePath(f[0], f[1], f[2]), repo.ArtifactFileName(f[1], f[2], "", "pom")))
		if err != nil {
			return in
		}
		h, err := maven.Peek(data)
		if err != nil {
			return in
		}
		if pp := h.Parent; pp != nil && pp.Group != "" && pp.Artifact != "" && pp.Version != "" {
			in.parent = pp.String()
		}
		vars := map[string]string{"project.version": f[2], "pom.version": f[2], "version": f[2]}
		for k, x := range h.Properties {
			vars[k] = x
		}
		for _, dep := range h.Managed {
			if dep.Scope != "import" || dep.Group == "" || dep.Artifact == "" || dep.Version == "" {
				continue
			}
			if v, err := maven.Interpolate(dep.Version, vars); err == nil && !strings.Contains(v, "${") {
				in.imports = append(in.imports, dep.Group+":"+dep.Artifact+":"+v)
			}
		}
		return in
	}
	const inf = 1 << 30
	start := map[string]int{}
	children := map[string][]string{}
	var walk func(n *Node, level int)
	walk = func(n *Node, level int) {
		key := n.Group + ":" + n.Artifact + ":" + n.Version
		if level > 100 {
			return
		}
		for _, c := range n.Children {
			children[key] = append(children[key], c.Group+":"+c.Artifact+":"+c.Version)
			walk(c, level+1)
		}
	}
	for _, r := range g.Roots {
		start[r.Group+":"+r.Artifact+":"+r.Version] = 0
		walk(r, 0)
	}
	get := func(k string) int {
		if v, ok := start[k]; ok {
			return v
		}
		return inf
	}
	relax := func(k string, t int) bool {
		if t < get(k) {
			start[k] = t
			return true
		}
		return false
	}
	var ready func(k string, depth int) int
	ready = func(k string, depth int) int {
		in := info(k)
		r := get(k) + 1
		if in.parent != "" && depth < 50 {
			r = max(r, ready(in.parent, depth+1))
		}
		for _, i := range in.imports {
			if depth < 50 {
				r = max(r, ready(i, depth+1))
			}
		}
		return r
	}
	for iter := 0; iter < 1000; iter++ {
		changed := false
		keys := make([]string, 0, len(start))
		for k := range start {
			keys = append(keys, k)
		}
		for _, k := range keys {
			if get(k) >= inf {
				continue
			}
			in := info(k)
			done := get(k) + 1
			if in.parent != "" {
				changed = relax(in.parent, done) || changed
			}
			afterParent := done
			if in.parent != "" {
				afterParent = max(done, ready(in.parent, 0))
			}
			for _, i := range in.imports {
				changed = relax(i, afterParent) || changed
			}
			for _, c := range children[k] {
				changed = relax(c, ready(k, 0)) || changed
			}
		}
		if !changed {
			break
		}
	}
	d := 0
	for k := range start {
		if get(k) < inf {
			d = max(d, ready(k, 0))
		}
	}
	if d == 0 {
		tb.Fatalf("graph depth 0: %s", fmt.Sprint(g.Roots))
	}
	return d + 1 // the jar round
}

// corpusPackages is issue 20's measurement: a graph from
// ../shared/corpus/repo-debian, which serves a .sha1 beside every file as
// Maven Central does.
var corpusPackages = []string{"org.apache.avro:avro:1.8.2", "org.apache.curator:curator-recipes:5.4.0"}

// BenchmarkCorpusChecksums resolves corpusPackages cold from a delayed Go
// file server over ../shared/corpus/repo-debian, with its checksum files
// ("sums") and without them ("nosums"), under each checksum policy, at 0,
// 20 and 50 ms per request (sub-benchmarks sums/20ms/warn and so on), and
// logs requests, sequential rounds (counted by the server, see
// mavenhttp.Server.Rounds; meaningless at 0 ms), the graph's depth
// (graphDepth) and the best of three wall times. It asserts the request
// counts only (no checksum request under ignore, else at most one per file
// when the .sha1 files are there); rounds and time are asserted by
// ColdResolve. PREBAKE_BENCH_TIMELINE=1 logs every request.
func BenchmarkCorpusChecksums(b *testing.B) {
	testenv.RequireIT(b)
	root := filepath.Join(testenv.SharedDir(b, ".."), "corpus", "repo-debian")
	for _, sums := range []bool{true, false} {
		for _, delay := range []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond} {
			for _, policy := range []ChecksumPolicy{ChecksumIgnore, ChecksumWarn, ChecksumStrict} {
				name := fmt.Sprintf("sums/%dms/%s", delay.Milliseconds(), policy)
				if !sums {
					name = "no" + name
				}
				b.Run(name, func(b *testing.B) { corpusRun(b, root, sums, delay, policy) })
			}
		}
	}
}

func corpusRun(b *testing.B, root string, sums bool, delay time.Duration, policy ChecksumPolicy) {
	opts := []mavenhttp.Option{mavenhttp.WithDelay(delay)}
	if !sums {
		opts = append(opts, mavenhttp.WithoutChecksums())
	}
	srv := mavenhttp.New(root, opts...)
	defer srv.Close()
	var best time.Duration
	for i := 0; i < 3; i++ {
		srv.Reset()
		req := Request{Packages: corpusPackages, Repositories: []string{srv.URL()}, NoDefaultRepositories: true,
			CacheDir: b.TempDir(), ChecksumPolicy: policy}
		start := time.Now()
		res, err := Resolve(context.Background(), req)
		d := time.Since(start)
		if err != nil {
			if !sums && policy == ChecksumStrict && errors.Is(err, repo.ErrChecksumMissing) {
				b.Logf("fails as it must (exit %d) after %d requests: %v", errdefs.KindOf(err), srv.Requests(), err)
				return
			}
			b.Fatal(err)
		}
		if i == 0 || d < best {
			best = d
		}
		timeline := srv.Timeline()
		if os.Getenv("PREBAKE_BENCH_TIMELINE") != "" && delay > 0 && i == 0 {
			for _, e := range timeline {
				b.Logf("%6.1f–%6.1fms round %2d %s", ms(e.At.Sub(start)), ms(e.End.Sub(start)), e.Round, e.Path)
			}
		}
		files, sumReqs, rounds := 0, 0, 0
		for _, e := range timeline {
			if mavenhttp.IsChecksum(e.Path) {
				sumReqs++
			} else {
				files++
			}
			rounds = max(rounds, e.Round)
		}
		if i > 0 {
			continue
		}
		depth := graphDepth(b, root, res.Graph)
		b.Logf("%d jars, %d requests (%d files, %d checksums), %d rounds (depth %d)", len(res.Lock.Artifacts), len(timeline), files, sumReqs, rounds, depth)
		b.ReportMetric(float64(len(timeline)), "requests")
		b.ReportMetric(float64(sumReqs), "checksum-requests")
		b.ReportMetric(float64(rounds), "rounds")
		b.ReportMetric(float64(depth), "depth")
		if want := 0; policy == ChecksumIgnore && sumReqs != want {
			b.Errorf("%d checksum requests under --checksum-policy ignore, want 0", sumReqs)
		}
		if limit := files * map[bool]int{true: 1, false: 3}[sums]; policy != ChecksumIgnore && sumReqs > limit {
			n := map[string]int{}
			for _, e := range timeline {
				n[e.Path]++
			}
			var odd []string
			for p, c := range n {
				if c > 1 || (mavenhttp.IsChecksum(p) && n[strings.TrimSuffix(p, filepath.Ext(p))] == 0) {
					odd = append(odd, fmt.Sprintf("%s×%d", p, c))
				}
			}
			b.Errorf("%d checksum requests for %d files, want at most %d: %v", sumReqs, files, limit, odd)
		}
	}
	b.ReportMetric(float64(best.Microseconds())/1000, "best-ms")
	b.Logf("best of 3: %s", best.Round(time.Millisecond))
}
