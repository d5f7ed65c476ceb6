package resolver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
)

// writeBlob puts data into cache as the blob of its sha256.
func writeBlob(t *testing.T, cache string, data []byte) (sum, path string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	sum = hex.EncodeToString(h[:])
	path = blobcache.BlobPath(cache, sum)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Rename(p, path); err != nil {
		t.Fatal(err)
	}
	return sum, path
}

// OpenBlob reads a blob once: hashed (then stamped) without a stamp,
// trusted with one; a blob modified before or while it is read fails the
// read with blobcache.ErrCorruptBlob (65), whichever way.
func TestOpenBlob(t *testing.T) {
	data := []byte("the jar bytes, which OpenBlob must check once")
	read := func(cache, sum string, size int64) ([]byte, error) {
		rc, err := blobcache.OpenBlob(cache, sum, size)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	t.Run("unstamped, then stamped", func(t *testing.T) {
		cache := t.TempDir()
		sum, path := writeBlob(t, cache, data)
		got, err := read(cache, sum, int64(len(data)))
		if err != nil || string(got) != string(data) {
			t.Fatalf("read %q, %v", got, err)
		}
		info, _ := os.Stat(path)
		if !blobcache.Stamped(blobcache.StampDir(cache, false), sum, info) {
			t.Fatal("a hashed blob was not stamped")
		}
		if got, err := read(cache, sum, -1); err != nil || string(got) != string(data) {
			t.Fatalf("stamped read %q, %v", got, err)
		}
	})
	for _, stampFirst := range []bool{false, true} {
		for _, tc := range tampers {
			name := tc.name
			if stampFirst {
				name = "stamped, " + name
			}
			t.Run(name, func(t *testing.T) {
				cache := t.TempDir()
				sum, path := writeBlob(t, cache, data)
				if stampFirst {
					if err := blobcache.VerifyBlob(cache, sum, -1); err != nil {
						t.Fatal(err)
					}
				}
				tc.do(t, path)
				_, err := read(cache, sum, -1)
				if !errors.Is(err, blobcache.ErrCorruptBlob) || errdefs.KindOf(err) != errdefs.Invalid {
					t.Fatalf("err = %v (kind %v), want blobcache.ErrCorruptBlob, Invalid", err, errdefs.KindOf(err))
				}
			})
		}
	}
	t.Run("stamped, rewritten while read", func(t *testing.T) {
		cache := t.TempDir()
		sum, path := writeBlob(t, cache, data)
		if err := blobcache.VerifyBlob(cache, sum, -1); err != nil {
			t.Fatal(err)
		}
		rc, err := blobcache.OpenBlob(cache, sum, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		buf := make([]byte, 4)
		if _, err := io.ReadFull(rc, buf); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("EVIL"), 10)
		f.Close()
		if _, err := io.ReadAll(rc); !errors.Is(err, blobcache.ErrCorruptBlob) {
			t.Fatalf("err = %v, want blobcache.ErrCorruptBlob", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := read(t.TempDir(), "00", -1)
		if !errors.Is(err, os.ErrNotExist) || errdefs.KindOf(err) != errdefs.NotFound {
			t.Fatalf("err = %v (kind %v)", err, errdefs.KindOf(err))
		}
	})
}
