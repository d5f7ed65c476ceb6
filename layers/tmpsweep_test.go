//go:build unix

package layers

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The temp-file holder of TestSweepTempsKilledWriter: a process that makes
// a locked temp file in PREBAKE_TEST_TEMP_HOLDER, prints its name and
// waits to be killed.
func init() {
	dir := os.Getenv("PREBAKE_TEST_TEMP_HOLDER")
	if dir == "" {
		return
	}
	f, err := createTemp(dir)
	if err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString(f.Name() + "\n")
	time.Sleep(time.Minute)
	os.Exit(0)
}

func tempNames(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	sort.Strings(m)
	return m
}

// A bake killed with kill -9 leaves its layer temp file (audit 4, L6): the
// next sweep removes it, and keeps a live writer's and a fresh one.
func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("partial layer"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk(tempPrefix+"left", old)         // unlocked, old: left by a killed bake
	mk(tempPrefix+"fresh", time.Now()) // unlocked, just made: its writer may not have locked it yet
	mk("0123abcd", old)                // a blob
	held := mk(tempPrefix+"held", old) // locked by a live writer that has not written for an hour
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, tempPrefix+"link")); err != nil {
		t.Fatal(err)
	}
	if n := sweepTemps(dir, time.Now()); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	want := []string{tempPrefix + "fresh", tempPrefix + "held", tempPrefix + "link"}
	if diff := cmp.Diff(want, tempNames(t, dir)); diff != "" {
		t.Errorf("temp files left (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "0123abcd")); err != nil {
		t.Errorf("blob: %v", err)
	}
	// Once per process and directory.
	mk(tempPrefix+"left2", old)
	if n := sweepTemps(dir, time.Now()); n != 0 {
		t.Errorf("second sweep removed %d, want 0", n)
	}
}

// A real writer process: while it runs its temp file stays, however old;
// after kill -9 the next sweep removes it.
func TestSweepTempsKilledWriter(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PREBAKE_TEST_TEMP_HOLDER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	name, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	name = name[:len(name)-1]
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
	if n := sweepTemps(dir, time.Now()); n != 0 {
		t.Fatalf("live writer: removed %d", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	swept.Delete(dir) // as a new process would
	if n := sweepTemps(dir, time.Now()); n != 1 {
		t.Errorf("after kill -9: removed %d, want 1", n)
	}
	if left := tempNames(t, dir); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}
