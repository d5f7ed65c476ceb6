//go:build !unix

package pypi

import "os"

func fileID(os.FileInfo) (string, bool) { return "", false }
