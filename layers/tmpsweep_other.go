//go:build !unix

package layers

import (
	"os"
	"time"
)

func lockTemp(*os.File) {}

// removeIfUnheld removes the temp file p when older than staleTempAge (no
// lock to test on this platform).
func removeIfUnheld(p string, fi os.FileInfo, now time.Time) bool {
	return now.Sub(fi.ModTime()) >= staleTempAge && os.Remove(p) == nil
}
