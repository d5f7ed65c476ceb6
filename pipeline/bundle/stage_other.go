//go:build !unix

package bundle

import "os"

// lockStaging creates the lock file of a staging directory (no locks on
// this platform: stale staging directories go by age).
func lockStaging(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

func stagingFree(string) (free, known bool) { return false, false }
