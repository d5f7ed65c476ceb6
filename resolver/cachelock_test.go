//go:build unix

package resolver

import (
	"bufio"
	"context"
	"errors"
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

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
)

// lockHelperEnv switches the test binary into a process that takes a URL's
// download lock, says "locked" and sleeps (see TestLockHelperProcess).
const lockHelperEnv = "PREBAKE_LOCK_HELPER"

// TestLockHelperProcess is not a test: it is the other process of
// TestDownloadLockCrossProcess.
func TestLockHelperProcess(t *testing.T) {
	if os.Getenv(lockHelperEnv) == "" {
		return
	}
	c, err := blobcache.Open(os.Getenv("HELPER_CACHE"), false, nil)
	if err != nil {
		os.Exit(3)
	}
	if _, err := c.LockURL(context.Background(), os.Getenv("HELPER_URL")); err != nil {
		os.Exit(4)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// A URL's download lock holds across processes, a waiter gives up with its
// context, and a holder killed with kill -9 leaves no stale lock: the kernel
// drops it, and the next process takes it at once.
func TestDownloadLockCrossProcess(t *testing.T) {
	dir := t.TempDir()
	const u = "https://repo.example/g/a/1/a-1.jar"
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"=1", "HELPER_CACHE="+dir, "HELPER_URL="+u)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper said %q", line)
	}
	c, err := blobcache.Open(dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.LockURL(ctx, u); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock held by another process: err = %v, want a wait ended by the context", err)
	}
	// Another URL is not blocked.
	unlock, err := c.LockURL(context.Background(), u+".other")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	start := time.Now()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	unlock, err = c.LockURL(ctx2, u)
	if err != nil {
		t.Fatalf("lock after its holder was killed: %v", err)
	}
	unlock()
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v to take the lock of a killed holder", d)
	}
	if _, err := os.Stat(c.LockPath(u) + ".lock"); err != nil {
		t.Errorf("lock file: %v", err)
	}
}

// A lock file that is a symbolic link is not followed: the download goes
// unlocked, and nothing is created where the link points.
func TestDownloadLockSymlink(t *testing.T) {
	c, err := blobcache.Open(t.TempDir(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://repo.example/g/a/1/a-1.pom"
	victim := filepath.Join(t.TempDir(), "victim")
	p := c.LockPath(u) + ".lock"
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
	unlock, err := c.LockURL(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Lstat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock followed a symbolic link: %v", err)
	}
}

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

// A 404 another process records is this process's own only when it came
// after this process opened the cache, or at most missingWindow before: a
// later run asks again.
func TestSharedNotFound(t *testing.T) {
	dir := t.TempDir()
	const u = "https://repo.example/g/missing/1/missing-1.pom"
	early, err := blobcache.Open(dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if early.SeenMissing(u) {
		t.Fatal("a 404 nobody recorded")
	}
	time.Sleep(time.Millisecond)
	other, _ := blobcache.Open(dir, false, nil)
	other.RecordMissing(u)
	if !early.SeenMissing(u) {
		t.Error("a process running when the 404 came does not share it")
	}
	time.Sleep(time.Millisecond)
	soon, _ := blobcache.Open(dir, false, nil)
	if !soon.SeenMissing(u) {
		t.Error("a process started just after the 404 (within missingWindow) does not share it")
	}
	late, _ := blobcache.Open(dir, false, nil)
	late.Opened = late.Opened.Add(blobcache.MissingWindow + time.Second)
	if late.SeenMissing(u) {
		t.Error("a process started missingWindow after the 404 takes it instead of asking again")
	}
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

// debugLines is a Logger with a verbose level, as *progress.Reporter.
type debugLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *debugLines) Printf(format string, args ...any) { l.add("", format, args...) }
func (l *debugLines) Debugf(format string, args ...any) { l.add("debug: ", format, args...) }
func (l *debugLines) add(p, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, p+fmt.Sprintf(format, args...))
}

// N6: the lock tree is the user's (0700, files 0600), and a lock held by
// another holder is waited for a bounded time: said at once under -v
// (Debugf), after lockWaitNote at the normal level, and given up after
// lockWaitMax (the download goes on unlocked).
func TestDownloadLockWaitIsBounded(t *testing.T) {
	defer func(n, m time.Duration) { blobcache.LockWaitNote, blobcache.LockWaitMax = n, m }(blobcache.LockWaitNote, blobcache.LockWaitMax)
	blobcache.LockWaitNote, blobcache.LockWaitMax = 200*time.Millisecond, 600*time.Millisecond
	var log debugLines
	c, err := blobcache.Open(t.TempDir(), false, &log)
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://user:s3cret@repo.example/g/a/1/a-1.pom"
	p := c.LockPath(u) + ".lock"
	unlock, err := c.LockURL(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	for path, want := range map[string]os.FileMode{c.Locks: 0o700, p: 0o600} {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %04o", path, info, err, want)
		}
	}
	// Another open file description holds the lock (flock is per open
	// file, so this conflicts as another process would).
	holder, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	unlock, err = c.LockURL(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if d := time.Since(start); d < blobcache.LockWaitMax || d > blobcache.LockWaitMax+time.Second {
		t.Errorf("waited %v for a held lock, want about %v", d, blobcache.LockWaitMax)
	}
	got := strings.Join(log.lines, "\n")
	for _, want := range []string{
		"debug: waiting for the download lock of https://repo.example/g/a/1/a-1.pom (" + p + "), held by another process",
		"held by another process for 0s now; giving up after 600ms",
		"warning: the download lock of https://repo.example/g/a/1/a-1.pom (" + p + ") is still held by another process after 600ms; downloading without it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "s3cret") {
		t.Errorf("log holds the password:\n%s", got)
	}
	if !strings.HasPrefix(log.lines[0], "debug: ") {
		t.Errorf("first line %q: want the -v line first", log.lines[0])
	}
}
