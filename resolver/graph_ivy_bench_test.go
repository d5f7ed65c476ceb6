package resolver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
)

// writeChainRepo writes the chain of chainSource (ev.chain:c0:1 → … →
// c(n-1), one jar each) as a Maven repository on disk.
func writeChainRepo(tb testing.TB, dir string, n int) {
	tb.Helper()
	src := chainSource{n}
	for i := range n {
		a := fmt.Sprintf("c%d", i)
		p, err := src.POM(context.Background(), "ev.chain", a, "1")
		if err != nil {
			tb.Fatal(err)
		}
		d := filepath.Join(dir, "ev", "chain", a, "1")
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, a+"-1.pom"), p.Data, 0o644); err != nil {
			tb.Fatal(err)
		}
		// an empty zip
		if err := os.WriteFile(filepath.Join(d, a+"-1.jar"), append([]byte("PK\x05\x06"), make([]byte, 18)...), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkDeepChainVsIvy resolves the same chain on disk with the real
// Ivy 2.5.1 oracle (Spark 3.5's resolution, ../shared/oracle) and with
// prebake (resolve and retrieve over file://, a fresh cache) in one run,
// checks that both retrieve the same jars, and reports the CPU and wall
// ratios (Ivy ÷ prebake) and the memory of each: Ivy's peak RSS (a JVM)
// and prebake's bytes allocated. Ivy's cost grows much faster than the
// chain (on the 2-core CI machine about 2 s of CPU for 50 levels, 5 s for
// 100, 65 s and 1.4 GB for 250), so the side-by-side sizes stay small;
// levels=3000 is prebake alone, from disk (BenchmarkDeepChain: the graph
// alone, with 250 and 1,000 levels for the slope).
func BenchmarkDeepChainVsIvy(b *testing.B) {
	testenv.RequireIT(b)
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	oracle := filepath.Join(testenv.SharedDir(b, root), "oracle", "run-oracle.sh")
	for _, n := range []int{50, 100, 3000} {
		withIvy := n <= 100
		name := fmt.Sprintf("levels=%d", n)
		if !withIvy {
			name += "/prebake-only"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			writeChainRepo(b, dir, n)
			repo := "file://" + dir + "/"
			var ivy ivyRun
			var pbCPU, pbWall time.Duration
			var pbAlloc uint64
			for range b.N {
				b.StopTimer()
				var want []string
				for i := range n {
					want = append(want, fmt.Sprintf("ev.chain_c%d-1.jar", i))
				}
				if withIvy {
					want = ivy.run(b, oracle, repo)
				}
				cache := b.TempDir()
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				b.StartTimer()
				t0, c0 := time.Now(), cpuTime()
				res, err := Resolve(context.Background(), Request{Packages: []string{"ev.chain:c0:1"}, Repositories: []string{repo},
					NoDefaultRepositories: true, CacheDir: cache, ChecksumPolicy: ChecksumIgnore})
				pbWall += time.Since(t0)
				pbCPU += cpuTime() - c0
				b.StopTimer()
				runtime.ReadMemStats(&m1)
				pbAlloc += m1.TotalAlloc - m0.TotalAlloc
				if err != nil {
					b.Fatal(err)
				}
				var got []string
				for _, a := range res.Lock.Artifacts {
					got = append(got, a.File)
				}
				sort.Strings(got)
				sort.Strings(want)
				if d := cmp.Diff(want, got); d != "" {
					b.Fatalf("jars differ from Ivy's (-ivy +prebake):\n%s", d)
				}
			}
			N := float64(b.N)
			if withIvy {
				b.ReportMetric(ivy.cpu.Seconds()/pbCPU.Seconds(), "ivy/prebake-cpu")
				b.ReportMetric(ivy.wall.Seconds()/pbWall.Seconds(), "ivy/prebake-wall")
				b.ReportMetric(ivy.cpu.Seconds()/N, "ivy-cpu-s/op")
				b.ReportMetric(float64(ivy.rss)/(1<<20), "ivy-maxrss-MB")
			}
			b.ReportMetric(pbCPU.Seconds()/N, "prebake-cpu-s/op")
			b.ReportMetric(pbWall.Seconds()/N, "prebake-wall-s/op")
			b.ReportMetric(float64(pbAlloc)/N/(1<<20), "prebake-alloc-MB/op")
		})
	}
}

// ivyRun sums the oracle's runs: wall and CPU time, peak RSS.
type ivyRun struct {
	wall, cpu time.Duration
	rss       int64
}

// run resolves ev.chain:c0:1 from repo with the oracle and returns the
// jars it retrieved.
func (r *ivyRun) run(b *testing.B, oracle, repo string) []string {
	b.Helper()
	t0 := time.Now()
	cmd := exec.Command(oracle, "--coords", "ev.chain:c0:1", "--repos", repo)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("oracle: %v\n%s", err, errb.String())
	}
	r.wall += time.Since(t0)
	r.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = max(r.rss, ru.Maxrss*1024) // KiB on Linux
	}
	var jars []string
	for _, l := range strings.Split(out.String(), "\n") {
		if jar, ok := strings.CutPrefix(l, "jar "); ok {
			jars = append(jars, jar)
		}
	}
	return jars
}
