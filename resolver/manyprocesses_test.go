//go:build unix

package resolver

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
)

// runResolves starts n `prebake resolve` processes at once on one cache and
// returns their locks.
func runResolves(t testing.TB, bin, repo, cache string, n int) []string {
	t.Helper()
	dir := t.TempDir()
	locks := make([]string, n)
	errs := make([]error, n)
	outs := make([][]byte, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock := filepath.Join(dir, fmt.Sprintf("p%02d.lock", i))
			args := []string{"resolve", "-q", "--no-default-repositories", "--repositories", repo, "--cache", cache, "--lock", lock}
			for _, p := range benchPackages {
				args = append(args, "--packages", p)
			}
			cmd := exec.Command(bin, args...)
			<-start
			outs[i], errs[i] = cmd.CombinedOutput()
			if errs[i] == nil {
				data, err := os.ReadFile(lock)
				locks[i], errs[i] = string(data), err
			}
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
		}
		if locks[i] != locks[0] {
			t.Fatalf("process %d wrote another lock:\n%s\nvs\n%s", i, locks[i], locks[0])
		}
	}
	return locks
}

// onceEach fails unless every path the server saw was requested once.
func onceEach(t testing.TB, srv *mavenhttp.Server, what string) (poms, jars int) {
	t.Helper()
	counts := map[string]int{}
	for _, e := range srv.Log() {
		counts[e.Path]++
	}
	for p, n := range counts {
		if n != 1 {
			t.Errorf("%s: %s requested %d times, want once", what, p, n)
		}
		switch {
		case strings.HasSuffix(p, ".pom"):
			poms++
		case strings.HasSuffix(p, ".jar"):
			jars++
		}
	}
	return poms, jars
}

// TestITManyProcessesOneColdCache: twenty `prebake resolve` processes
// started at once on one empty cache for the same set (an Airflow node at
// the top of the hour) all succeed with the same lock, and the repository
// (its request counter) sees each POM, jar and checksum file once. Then a
// resolve killed with kill -9 while it downloads a jar (holding its lock)
// does not stall the next twenty: the jar is fetched once more, by one of
// them.
func TestITManyProcessesOneColdCache(t *testing.T) {
	testenv.RequireIT(t)
	const n = 20
	bin := testenv.Prebake(t)
	srv := mavenhttp.New("testdata/repo", mavenhttp.WithDelay(20*time.Millisecond))
	defer srv.Close()

	start := time.Now()
	runResolves(t, bin, srv.URL(), filepath.Join(t.TempDir(), "cache"), n)
	poms, jars := onceEach(t, srv, "cold")
	t.Logf("%d processes, one cold cache: %v, %d requests (%d POMs, %d jars), each path once", n, time.Since(start).Round(time.Millisecond), srv.Requests(), poms, jars)
	if poms == 0 || jars == 0 {
		t.Fatalf("no POM or jar requested (%d, %d)", poms, jars)
	}

	// kill -9 mid-download, then twenty more.
	srv.Reset()
	cache := filepath.Join(t.TempDir(), "cache")
	const jar = "/io/netty/netty-all/4.1.48.Final/netty-all-4.1.48.Final.jar"
	hung := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	hang := mavenhttp.Hang([]byte("PK partial"), 1<<20, release)
	var once sync.Once
	srv.SetFault(jar, func(w http.ResponseWriter, r *http.Request, k int) bool {
		first := false
		once.Do(func() { first = true })
		if !first {
			return false
		}
		hung <- struct{}{}
		return hang(w, r, k)
	})
	args := []string{"resolve", "-q", "--no-default-repositories", "--repositories", srv.URL(), "--cache", cache, "--lock", filepath.Join(t.TempDir(), "k.lock")}
	for _, p := range benchPackages {
		args = append(args, "--packages", p)
	}
	victim := exec.Command(bin, args...)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung:
	case <-time.After(60 * time.Second):
		victim.Process.Kill()
		t.Fatal("the first process never requested the jar")
	}
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	// Requests the victim sent before it died may still be read by the
	// server after this point: wait until none has arrived for a while, so
	// that the counts below are the twenty new processes' alone.
	for last, quiet := srv.Requests(), 0; quiet < 3; {
		time.Sleep(100 * time.Millisecond)
		if n := srv.Requests(); n != last {
			last, quiet = n, 0
		} else {
			quiet++
		}
	}
	srv.Reset()
	start = time.Now()
	runResolves(t, bin, srv.URL(), cache, n)
	onceEach(t, srv, "after kill -9")
	if srv.Count(jar) != 1 {
		t.Errorf("%s requested %d times after the kill, want once", jar, srv.Count(jar))
	}
	t.Logf("after kill -9 of a lock holder: %d processes in %v, %d requests", n, time.Since(start).Round(time.Millisecond), srv.Requests())
}

// BenchmarkManyProcesses: one `prebake resolve` on a cold cache, then 20 at
// once on another cold cache, same set, same repository (20 ms per
// request): requests_ratio is the 20 processes' requests over the one's
// (1.0: each file fetched once), wall_ratio their wall time over the one's.
func BenchmarkManyProcesses(b *testing.B) {
	testenv.RequireIT(b)
	bin := testenv.Prebake(b)
	srv := mavenhttp.New("testdata/repo", mavenhttp.WithDelay(20*time.Millisecond))
	defer srv.Close()
	for b.Loop() {
		srv.Reset()
		s := time.Now()
		runResolves(b, bin, srv.URL(), filepath.Join(b.TempDir(), "cache"), 1)
		one, r1 := time.Since(s), srv.Requests()
		srv.Reset()
		s = time.Now()
		runResolves(b, bin, srv.URL(), filepath.Join(b.TempDir(), "cache"), 20)
		twenty, r20 := time.Since(s), srv.Requests()
		onceEach(b, srv, "20 processes")
		b.ReportMetric(float64(r1), "requests_1")
		b.ReportMetric(float64(r20), "requests_20")
		b.ReportMetric(float64(r20)/float64(r1), "requests_ratio")
		b.ReportMetric(one.Seconds()*1e3, "wall_1_ms")
		b.ReportMetric(twenty.Seconds()*1e3, "wall_20_ms")
		b.ReportMetric(twenty.Seconds()/one.Seconds(), "wall_ratio")
	}
}
