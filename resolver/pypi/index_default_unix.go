//go:build unix

package pypi

import (
	"os"
	"strconv"
	"syscall"
)

// fileID is a file's device and inode.
func fileID(st os.FileInfo) (string, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return strconv.FormatUint(uint64(s.Dev), 10) + ":" + strconv.FormatUint(s.Ino, 10), true
}
