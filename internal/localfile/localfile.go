// Package localfile reads a local file a user named (a settings file, a
// pod template, a token file, a lock) with the checks hostile input needs:
// it must be a regular file once symlinks are followed (never a FIFO, a
// device such as /dev/zero, a socket or a directory, so a read never
// hangs or runs unbounded) of at most limit bytes.
//
// Every error names the file. A missing file is errdefs.NotFound and still
// matches os.ErrNotExist; anything else (not a regular file, over the
// limit, unreadable) is errdefs.Invalid, and an os error stays matchable
// (errors.Is(err, fs.ErrPermission)).
package localfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/prebake/prebake/errdefs"
)

// ErrNotRegular is matched (errors.Is) by a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched (errors.Is) by a file over its limit.
var ErrTooLarge = errors.New("larger than the limit")

// Read returns the content of the regular file at path, of at most limit
// bytes.
func Read(path string, limit int64) ([]byte, error) {
	rc, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// Open opens the regular file at path for reading; a file over limit
// bytes fails here, and the reader fails (ErrTooLarge) if the file grows
// past limit while it is read.
func Open(path string, limit int64) (io.ReadCloser, error) {
	// Stat first: a FIFO or a device is refused before it is opened.
	st, err := os.Stat(path)
	if err != nil {
		return nil, statErr(path, err)
	}
	if err := check(path, st, limit); err != nil {
		return nil, err
	}
	// Non-blocking, so a FIFO swapped in after the Stat cannot hang the
	// open; the Stat of the open file then refuses it.
	f, err := openNonBlock(path)
	if err != nil {
		return nil, statErr(path, err)
	}
	st, err = f.Stat()
	if err == nil {
		err = check(path, st, limit)
	} else {
		err = errdefs.New(errdefs.Invalid, fmt.Errorf("%s: %w", path, err))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &capReader{f: f, path: path, limit: limit, left: limit}, nil
}

func statErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is named once, below
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errdefs.New(errdefs.NotFound, fmt.Errorf("%s does not exist: %w", path, fs.ErrNotExist))
	}
	return errdefs.New(errdefs.Invalid, fmt.Errorf("%s: %w", path, err))
}

// check refuses what is not a regular file of at most limit bytes.
func check(path string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%s is %s, %w", path, kind(st.Mode()), ErrNotRegular))
	}
	if st.Size() > limit {
		return tooLarge(path, limit)
	}
	return nil
}

func tooLarge(path string, limit int64) error {
	return errdefs.New(errdefs.Invalid, fmt.Errorf("%s: %w of %d bytes", path, ErrTooLarge, limit))
}

// kind names a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// capReader reads at most left bytes, and fails if there is more.
type capReader struct {
	f           *os.File
	path        string
	limit, left int64
	extra       [1]byte
}

func (r *capReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		// At the limit: the file must end here.
		n, err := r.f.Read(r.extra[:])
		if n > 0 {
			return 0, tooLarge(r.path, r.limit)
		}
		if err != nil && err != io.EOF {
			return 0, errdefs.New(errdefs.Invalid, fmt.Errorf("reading %s: %w", r.path, err))
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	if err != nil && err != io.EOF {
		err = errdefs.New(errdefs.Invalid, fmt.Errorf("reading %s: %w", r.path, err))
	}
	return n, err
}

func (r *capReader) Close() error { return r.f.Close() }
