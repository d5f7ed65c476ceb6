package resolver

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// writeBlob puts data into cache as the blob of its sha256.
func writeBlob(t *testing.T, cache string, data []byte) (sum, path string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum = sha256File(t, p)
	path = BlobPath(cache, sum)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Rename(p, path); err != nil {
		t.Fatal(err)
	}
	return sum, path
}

// OpenBlob reads a blob once: hashed (then stamped) without a stamp,
// trusted with one; a blob modified before or while it is read fails the
// read with ErrCorruptBlob (65), whichever way.
func TestOpenBlob(t *testing.T) {
	data := []byte("the jar bytes, which OpenBlob must check once")
	read := func(cache, sum string, size int64) ([]byte, error) {
		rc, err := OpenBlob(cache, sum, size)
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
		if !Stamped(StampDir(cache, false), sum, info) {
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
					if err := VerifyBlob(cache, sum, -1); err != nil {
						t.Fatal(err)
					}
				}
				tc.do(t, path)
				_, err := read(cache, sum, -1)
				if !errors.Is(err, ErrCorruptBlob) || exitcode.Code(err) != exitcode.DataErr {
					t.Fatalf("err = %v (code %d), want ErrCorruptBlob, 65", err, exitcode.Code(err))
				}
			})
		}
	}
	t.Run("stamped, rewritten while read", func(t *testing.T) {
		cache := t.TempDir()
		sum, path := writeBlob(t, cache, data)
		if err := VerifyBlob(cache, sum, -1); err != nil {
			t.Fatal(err)
		}
		rc, err := OpenBlob(cache, sum, -1)
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
		if _, err := io.ReadAll(rc); !errors.Is(err, ErrCorruptBlob) {
			t.Fatalf("err = %v, want ErrCorruptBlob", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := read(t.TempDir(), "00", -1)
		if !errors.Is(err, os.ErrNotExist) || exitcode.Code(err) != exitcode.NotFound {
			t.Fatalf("err = %v (code %d)", err, exitcode.Code(err))
		}
	})
}
