//go:build unix

package cache_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	blobcache "github.com/prebake/prebake/resolver/cache"
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
// (Debugf), after the note's wait at the normal level, and given up after
// the maximum (the download goes on unlocked).
func TestDownloadLockWaitIsBounded(t *testing.T) {
	const waitNote, waitMax = 200 * time.Millisecond, 600 * time.Millisecond
	var log debugLines
	c, err := blobcache.Open(t.TempDir(), false, &log, blobcache.WithLockWait(waitNote, waitMax))
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
	if d := time.Since(start); d < waitMax || d > waitMax+time.Second {
		t.Errorf("waited %v for a held lock, want about %v", d, waitMax)
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
