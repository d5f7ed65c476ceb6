//go:build unix

package localfile

import (
	"os"
	"syscall"
)

// openNonBlock opens path read-only without blocking on a FIFO.
func openNonBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
