//go:build unix

package cache

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/prebake/prebake/internal/flock"
)

// openLockFile opens (creating, 0600, in a 0700 directory) a lock file,
// never through a symbolic link.
func OpenLockFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil && (errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("lock file is not a regular file")
	}
	return f, nil
}

// tryLock takes an exclusive flock without waiting: false when another
// process holds it.
func tryLock(f *os.File) (bool, error) { return flock.TryLock(f) }

func unlockFile(f *os.File) { flock.Unlock(f) }

// openDirNoFollow opens a directory, never through a symbolic link.
func openDirNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
}
