package localfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/errdefs"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		limit      int64
		want       string
		kind       errdefs.Kind
		is         error
		msg        string
	}{
		{name: "regular", path: file, limit: 5, want: "hello"},
		{name: "symlink followed", path: link, limit: 10, want: "hello"},
		{name: "over the limit", path: file, limit: 4, kind: errdefs.Invalid, is: ErrTooLarge, msg: file + ": larger than the limit of 4 bytes"},
		{name: "directory", path: dir, limit: 10, kind: errdefs.Invalid, is: ErrNotRegular, msg: dir + " is a directory"},
		{name: "fifo", path: fifo, limit: 10, kind: errdefs.Invalid, is: ErrNotRegular, msg: fifo + " is a named pipe (FIFO)"},
		{name: "dev zero", path: "/dev/zero", limit: 10, kind: errdefs.Invalid, is: ErrNotRegular, msg: "/dev/zero is a character device"},
		{name: "missing", path: filepath.Join(dir, "nothing"), limit: 10, kind: errdefs.NotFound, is: fs.ErrNotExist, msg: "does not exist"},
		{name: "dangling symlink", path: dangling, limit: 10, kind: errdefs.NotFound, is: fs.ErrNotExist, msg: dangling + " does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got, err := Read(tc.path, tc.limit)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.kind == errdefs.Unknown {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, string(got)); diff != "" {
					t.Errorf("content (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, read %q", got)
			}
			if !errors.Is(err, tc.kind) || !errors.Is(err, tc.is) {
				t.Errorf("error %v: want kind %v and %v", err, tc.kind, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
		})
	}
}

// TestOpenGrows: a file that grows past the limit after the check fails
// while it is read.
func TestOpenGrows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := Open(file, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := os.WriteFile(file, []byte("abcdefgh"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, errdefs.Invalid) {
		t.Errorf("got %v, want ErrTooLarge", err)
	}
}
