//go:build unix

package layers

import (
	"os"
	"syscall"
	"time"

	"github.com/prebake/prebake/internal/flock"
)

func lockTemp(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// removeIfUnheld removes the temp file p (fi: its Lstat) when no process
// holds its lock, testing it under the lock so its writer cannot be
// mid-write. A file that cannot be locked at all (a file system without
// flock) goes only when older than staleTempAge.
func removeIfUnheld(p string, fi os.FileInfo, now time.Time) bool {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if ok, err := flock.TryLock(f); !ok {
		if err == nil {
			return false // its writer runs
		}
		if now.Sub(fi.ModTime()) < staleTempAge {
			return false
		}
	}
	// The name must still be the file tested (not replaced meanwhile).
	if got, err := f.Stat(); err != nil || !os.SameFile(got, fi) {
		return false
	}
	return os.Remove(p) == nil
}
