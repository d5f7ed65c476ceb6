package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/flock"
)

// buildWaitRecorder keeps WaitForBuild's Fatalf message and stops the
// caller with a panic instead of ending the test.
type buildWaitRecorder struct {
	testing.TB
	fatal string
}

func (r *buildWaitRecorder) Fatalf(format string, args ...any) {
	r.fatal = format
	panic("fatal")
}
func (r *buildWaitRecorder) Helper() {}

// holdLock opens path apart (its own open file description, as another
// process's would be) and takes flock's exclusive lock on it.
func holdLock(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if ok, err := flock.TryLock(f); !ok || err != nil {
		t.Skipf("no flock here: %v", err)
	}
	return f
}

func TestWaitForBuild(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "x.lock")

	// No lock file, then a lock file nobody holds: no wait.
	for _, name := range []string{"no lock file", "free lock"} {
		start := time.Now()
		WaitForBuild(t, lock, "x", time.Minute)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: waited %s", name, d)
		}
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A build holding the lock that ends: WaitForBuild returns after it.
	f := holdLock(t, lock)
	unlocked := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { flock.Unlock(f); close(unlocked) })
	start := time.Now()
	WaitForBuild(t, lock, "x", time.Minute)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("returned after %s, before the build let go", d)
	}
	<-unlocked // the unlock happens before f's Close at cleanup

	// A build that does not end within the bound: the test fails, naming it.
	holdLock(t, lock)
	r := &buildWaitRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		WaitForBuild(r, lock, "the thing", 0)
	}()
	if !strings.Contains(r.fatal, "has not ended after") {
		t.Errorf("Fatalf %q, want the build not ended", r.fatal)
	}
}
