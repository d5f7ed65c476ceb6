//go:build unix

package bundle

import (
	"os"
	"syscall"

	"github.com/prebake/prebake/internal/flock"
)

// lockStaging creates the lock file of a staging directory and holds an
// exclusive lock on it until the file is closed (or the process dies).
func lockStaging(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// stagingFree reports whether the lock of a staging directory is free
// (its import no longer runs); known is false when there is no lock file
// to test.
func stagingFree(path string) (free, known bool) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false, false
	}
	defer f.Close()
	ok, _ := flock.TryLock(f) // a lock that cannot be taken is not free
	return ok, true
}
