//go:build !unix

package cache

import (
	"errors"
	"os"
)

// Without flock the downloads go unlocked (see cachelock.go).
func openLockFile(string) (*os.File, error) {
	return nil, errors.New("no download locks on this platform")
}

func tryLock(*os.File) (bool, error) { return false, errors.New("no download locks on this platform") }

func unlockFile(*os.File) {}

func openDirNoFollow(path string) (*os.File, error) { return os.Open(path) }
