//go:build unix

package cachedir

import (
	"os"
	"syscall"
)

// owners: files have owners and Unix modes.
const owners = true

func ownerOf(info os.FileInfo) (int, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// Writable reports whether the user may create files in dir.
func Writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }
