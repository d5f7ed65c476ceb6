package resolver

import (
	"errors"
	"fmt"
	"io"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
)

// Staged is a set of blobs written into a cache's temp directory, each
// checked against its sha256 and size as it was written, that Commit moves
// into place (as a download is) and Abort removes: an import that finds
// one bad file leaves the cache as it was (see pipeline/bundle).
type Staged struct {
	c      *cache.Cache
	blobs  []*cache.TempWriter
	closed bool
}

// Stage opens the cache in cacheDir (cache.DefaultDir if empty) for a
// staged import. The caller must Commit or Abort.
func Stage(cacheDir string, opts ...Option) (*Staged, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	cacheDir = cache.Dir(cacheDir)
	c, err := cache.Open(cacheDir, false, o.log)
	if err != nil {
		return nil, err
	}
	return &Staged{c: c}, nil
}

// ErrStagedSize is matched (errors.Is) when a staged blob is longer or
// shorter than the size it was staged with.
var ErrStagedSize = errors.New("size differs")

// Add writes r (name is used in errors) to a temp file: its bytes must be
// size long and hash to sha256Hex, else the error is errdefs.Invalid and
// matches ErrChecksumMismatch or ErrStagedSize. At most size+1 bytes are
// read from r.
func (s *Staged) Add(name string, r io.Reader, sha256Hex string, size int64) error {
	if s.closed {
		return errdefs.Errorf(errdefs.Internal, "staged import: Add after Commit or Abort")
	}
	t, err := s.c.NewTemp()
	if err != nil {
		return err
	}
	rr := &stagedReader{r: io.LimitReader(r, size+1)}
	if _, err := io.Copy(t, rr); err != nil {
		t.Abort()
		if rr.err != nil {
			return fmt.Errorf("%s: %w", name, rr.err)
		}
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", s.c.Dir, err))
	}
	sum := t.Sums()
	switch {
	case sum.Size != size:
		t.Abort()
		more := "fewer"
		if sum.Size > size {
			more = "more"
		}
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%s: %w: it has %s bytes than the %d its index says", name, ErrStagedSize, more, size))
	case sum.SHA256 != sha256Hex:
		t.Abort()
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s: sha256 is %s, want %s", ErrChecksumMismatch, name, sum.SHA256, sha256Hex))
	}
	if err := t.Close(); err != nil {
		t.Abort()
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", s.c.Dir, err))
	}
	s.blobs = append(s.blobs, t)
	return nil
}

// Commit moves every staged blob into place and returns their paths, in
// the order they were added. A blob the cache holds already (stamped) is
// kept.
func (s *Staged) Commit() ([]string, error) {
	if s.closed {
		return nil, errdefs.Errorf(errdefs.Internal, "staged import: Commit after Commit or Abort")
	}
	s.closed = true
	paths := make([]string, 0, len(s.blobs))
	for i, t := range s.blobs {
		p, err := t.Commit()
		if err != nil {
			for _, rest := range s.blobs[i+1:] {
				rest.Abort()
			}
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Abort removes every staged blob (idempotent; a no-op after Commit).
func (s *Staged) Abort() {
	if s.closed {
		return
	}
	s.closed = true
	for _, t := range s.blobs {
		t.Abort()
	}
}

// stagedReader records the error of the source (not the cache's).
type stagedReader struct {
	r   io.Reader
	err error
}

func (r *stagedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}
