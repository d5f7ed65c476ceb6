//go:build unix

package cache

import (
	"os"
	"syscall"
)

// statIDs are the inode, device and ctime (ns) of a file.
func statIDs(info os.FileInfo) (ino, dev uint64, ctime int64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Ino), uint64(st.Dev), st.Ctim.Nano(), true
}

func ownedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
