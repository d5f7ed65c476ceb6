package sitepkgs

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/prebake/prebake/errdefs"
)

// ArchiveLevel is the pinned gzip level of WriteArchive.
const ArchiveLevel = 6

// WriteArchive writes t as a tar.gz to w (see the package comment): the
// tree's root is the archive's, so Spark's "#name" fragment unpacks it as
// ./name/<package>. Each file's bytes are checked against its sha256 as
// they are read: a staged file changed since Stage fails the write.
func (t *Tree) WriteArchive(ctx context.Context, w io.Writer, epoch time.Time) error {
	zw, err := gzip.NewWriterLevel(w, ArchiveLevel)
	if err != nil {
		return errdefs.New(errdefs.Internal, err)
	}
	zw.Header = gzip.Header{OS: 255} // no name, no mtime
	tw := tar.NewWriter(zw)
	if err := t.writeTar(ctx, tw, epoch.UTC().Truncate(time.Second)); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	if err := zw.Close(); err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	return nil
}

func (t *Tree) writeTar(ctx context.Context, tw *tar.Writer, epoch time.Time) error {
	dirs := t.Dirs()
	var buf []byte
	for i, j := 0, 0; i < len(dirs) || j < len(t.Entries); {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Merge the sorted directories ("a/b", written "a/b/") and the
		// sorted files by path.
		if i < len(dirs) && (j == len(t.Entries) || dirs[i] < t.Entries[j].Path) {
			h := &tar.Header{Typeflag: tar.TypeDir, Name: dirs[i] + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}
			if err := tw.WriteHeader(h); err != nil {
				return errdefs.New(errdefs.CantWrite, err)
			}
			i++
			continue
		}
		e := t.Entries[j]
		j++
		mode := int64(0o644)
		if e.Mode&0o111 != 0 {
			mode = 0o755
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.Path, Mode: mode, Size: e.Size, ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return errdefs.New(errdefs.CantWrite, err)
		}
		if buf == nil {
			buf = make([]byte, 256<<10)
		}
		if err := copyVerified(tw, e, buf); err != nil {
			return err
		}
	}
	return nil
}

// copyVerified copies e's staged file to w, checking its size and sha256.
func copyVerified(w io.Writer, e Entry, buf []byte) error {
	f, err := e.Open()
	if err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("%s (from %s): %w", e.Path, e.Wheel, err))
	}
	defer f.Close()
	h := newVerifier(e)
	n, err := io.CopyBuffer(io.MultiWriter(w, h), io.LimitReader(f, e.Size+1), buf)
	if ee := (*errdefs.Error)(nil); errors.As(err, &ee) {
		return err // a wheel member that is not its RECORD's (Streaming)
	}
	if err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("%s (from %s): %w", e.Path, e.Wheel, err))
	}
	return h.check(n)
}
