package wheel

import (
	"context"
	"io"
	"path/filepath"
)

// Check verifies the wheel r (size bytes, named file) as Install would,
// writing nothing: every member path, type and size, the expansion bounds,
// WHEEL and RECORD, and every member's bytes against RECORD's hash and
// size. A resolver calls it before it records a wheel, so a lock never
// names a wheel that cannot be installed. It fails as Install does: a
// refused wheel is errdefs.Invalid naming the wheel and the member, a
// cancelled ctx its error. WithMaxSize, WithMaxFiles and WithMaxRatio
// apply; WithScripts and WithData change nothing checked.
func Check(ctx context.Context, r io.ReaderAt, size int64, file string, opts ...Option) error {
	o, _, p, err := openWheel(r, size, file, opts)
	if err != nil {
		return err
	}
	w := &writer{ctx: ctx, wheel: file, o: o, buf: make([]byte, 64<<10)}
	for _, m := range p.members {
		m.target = "" // verified, not written
		if _, err := w.member(m); err != nil {
			return err
		}
	}
	return nil
}

// CheckFile checks the wheel at path (see Check), named by its base name.
// A missing file is errdefs.NotFound; a FIFO, a device or a directory
// errdefs.Invalid, refused before it is opened.
func CheckFile(ctx context.Context, path string, opts ...Option) error {
	f, size, err := openRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Check(ctx, f, size, filepath.Base(path), opts...)
}
