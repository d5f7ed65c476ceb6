//go:build !unix

package localfile

import "os"

// openNonBlock opens path read-only (the Stat before it refused a FIFO).
func openNonBlock(path string) (*os.File, error) { return os.Open(path) }
