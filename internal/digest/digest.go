// Package digest hashes files: the one sha256-of-a-file helper of the
// project.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
)

// File returns the hex sha256 and the size of the file at path.
func File(path string) (sum string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return Reader(f)
}

// Reader returns the hex sha256 of what r yields and its length.
func Reader(r io.Reader) (sum string, size int64, err error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
