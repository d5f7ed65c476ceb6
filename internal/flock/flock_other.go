//go:build !unix

package flock

import (
	"errors"
	"os"
)

// TryLock cannot lock on this platform: false and errors.ErrUnsupported.
func TryLock(*os.File) (bool, error) { return false, errors.ErrUnsupported }

// Unlock does nothing on this platform.
func Unlock(*os.File) {}
