package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/prebake/prebake/errdefs"
)

// OpenBlob opens the cache blob named sum (size bytes, < 0: any) for one
// checked read, so that its bytes are read once: a blob with a matching
// stamp (see blobcheck.go) is trusted, and its stat is checked again when
// the read reaches EOF (a write in place moves its ctime); any other blob is
// hashed as it is read, and stamped when it matches. Either way the read
// that reaches EOF fails with ErrCorruptBlob (errdefs.Invalid) when the bytes
// are not the blob's. A missing blob matches os.ErrNotExist (errdefs.NotFound).
func OpenBlob(cacheDir, sum string, size int64) (io.ReadCloser, error) {
	cacheDir = Dir(cacheDir)
	path := BlobPath(cacheDir, sum)
	f, err := os.Open(path)
	if err != nil {
		return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("cache blob %s: %w", path, err))
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || (size >= 0 && info.Size() != size) {
		f.Close()
		if err != nil {
			return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("cache blob %s: %w", path, err))
		}
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s has %d bytes, want %d", ErrCorruptBlob, path, info.Size(), size))
	}
	r := &blobReader{f: f, path: path, sum: sum, Size: info.Size(), stamps: StampDir(cacheDir, true)}
	if Stamped(r.stamps, sum, info) {
		r.stamp = stampOf(info)
	} else {
		r.h = sha256.New()
	}
	return r, nil
}

// CacheJarOpener is a layers.JarOpener (same signature; layers does not
// import the resolver) for the cache in cacheDir: it takes a path that is
// the cache blob of its sha256 and opens it with OpenBlob.
func JarOpener(cacheDir string) func(path, sum string, size int64) (io.ReadCloser, bool, error) {
	cacheDir = Dir(cacheDir)
	return func(path, sum string, size int64) (io.ReadCloser, bool, error) {
		if filepath.Clean(path) != BlobPath(cacheDir, sum) {
			return nil, false, nil
		}
		rc, err := OpenBlob(cacheDir, sum, size)
		return rc, err == nil, err
	}
}

// blobReader is OpenBlob's reader: it hashes (h != nil) or re-checks the
// stamp (stamp != "") at EOF.
type blobReader struct {
	f      *os.File
	path   string
	sum    string
	Size   int64
	n      int64
	stamps string
	stamp  string
	h      hash.Hash
}

func (r *blobReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.n += int64(n)
	if r.h != nil {
		r.h.Write(p[:n])
	}
	if err == io.EOF {
		if cerr := r.check(); cerr != nil {
			return n, cerr
		}
	}
	return n, err
}

func (r *blobReader) check() error {
	if r.n != r.Size {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s: read %d bytes, it had %d", ErrCorruptBlob, r.path, r.n, r.Size))
	}
	if r.h != nil {
		if got := hex.EncodeToString(r.h.Sum(nil)); got != r.sum {
			return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s hashes to %s", ErrCorruptBlob, r.path, got))
		}
		writeStamp(r.stamps, r.sum, r.path)
		return nil
	}
	info, err := r.f.Stat()
	if err != nil || stampOf(info) != r.stamp {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s changed while it was read", ErrCorruptBlob, r.path))
	}
	return nil
}

func (r *blobReader) Close() error { return r.f.Close() }
