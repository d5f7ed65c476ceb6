package lock

import (
	"fmt"

	"github.com/prebake/prebake/internal/coordpart"
)

// CheckHashes checks the lock's own hashes: inputs.inputsHash is 64
// lowercase hex digits, and so is lockHash when it is set. The error
// names the field and matches ErrBadLock. (A malformed inputsHash used to
// read as a stale lock, 78, rather than as bad input.)
func (l *File) CheckHashes() error {
	if !hex64(l.Inputs.InputsHash) {
		return fmt.Errorf("%w: inputs.inputsHash %s is not 64 lowercase hex digits", ErrBadLock, coordpart.Quote(l.Inputs.InputsHash))
	}
	if l.LockHash != "" && !hex64(l.LockHash) {
		return fmt.Errorf("%w: lockHash %s is not 64 lowercase hex digits", ErrBadLock, coordpart.Quote(l.LockHash))
	}
	return nil
}

func hex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
