//go:build unix

package bundle

import (
	"os"
	"syscall"
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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, true
	}
	return true, true
}
