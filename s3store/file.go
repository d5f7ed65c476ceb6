package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/safepath"
)

// fileBackend is the store on a local filesystem (file:///dir). Writes go
// to a temp file beside the target, are synced, and are linked into place,
// so they are atomic and never clobber.
type fileBackend struct{ root string }

var _ backend = (*fileBackend)(nil)

func newFileBackend(root string) *fileBackend { return &fileBackend{root: filepath.Clean(root)} }

func (b *fileBackend) path(key string) string { return filepath.Join(b.root, filepath.FromSlash(key)) }

func (b *fileBackend) name(key string) string { return "file://" + filepath.ToSlash(b.path(key)) }

func (b *fileBackend) head(_ context.Context, key string) (int64, error) {
	fi, err := os.Stat(b.path(key))
	if err != nil {
		return 0, b.wrap("stat", key, err)
	}
	return fi.Size(), nil
}

func (b *fileBackend) get(_ context.Context, key string) ([]byte, error) {
	// A regular file (a FIFO in the store never hangs the read) of at most
	// maxGetSize bytes.
	data, err := localfile.Read(b.path(key), maxGetSize)
	switch {
	case errors.Is(err, localfile.ErrTooLarge):
		return nil, tooLargeErr(b.name(key))
	case errors.Is(err, localfile.ErrNotRegular):
		return nil, fmt.Errorf("reading %s: %w", b.name(key), err)
	case err != nil:
		return nil, b.wrap("reading", key, err)
	}
	return data, nil
}

func (b *fileBackend) putFile(ctx context.Context, key, _ string, body io.Reader, _ int64, _ string) error {
	return b.write(ctx, key, body)
}

func (b *fileBackend) putBytes(ctx context.Context, key string, data []byte) error {
	return b.write(ctx, key, strings.NewReader(string(data)))
}

func (b *fileBackend) write(ctx context.Context, key string, r io.Reader) error {
	dst := b.path(key)
	if err := safepath.Rel(key); err != nil || !safepath.Within(b.root, dst) {
		return errdefs.Errorf(errdefs.Invalid, "writing %s: outside the store %s", coordpart.Quote(key), b.root)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return b.wrap("writing", key, err)
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return b.wrap("writing", key, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := copyCtx(ctx, f, r); err != nil {
		f.Close()
		return b.wrap("writing", key, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return b.wrap("writing", key, err)
	}
	if err := f.Close(); err != nil {
		return b.wrap("writing", key, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return b.wrap("writing", key, err)
	}
	// A hard link fails when dst exists: the no-clobber write. Filesystems
	// without hard links fall back to rename, which replaces the same bytes.
	if err := os.Link(tmp, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", b.name(key), ErrExists)
		}
		if _, serr := os.Stat(dst); serr == nil {
			return fmt.Errorf("%s: %w", b.name(key), ErrExists)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return b.wrap("writing", key, err)
		}
	}
	return nil
}

// copyCtx copies r to w like io.Copy, stopping when ctx ends (checked
// before each chunk).
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (b *fileBackend) url(_ context.Context, key string, _ URLStyle, _ time.Duration) (string, error) {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(b.path(key))}
	return u.String(), nil
}

func (b *fileBackend) list(_ context.Context, prefix string) ([]object, error) {
	var objs []object
	dir := b.path(prefix)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(b.root, p)
		if err != nil {
			return err
		}
		objs = append(objs, object{Key: filepath.ToSlash(rel), Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, b.wrap("listing", prefix, err)
	}
	return objs, nil
}

// A directory store has no multipart uploads.
func (b *fileBackend) uploads(context.Context, string) ([]upload, error) { return nil, nil }

func (b *fileBackend) abort(context.Context, upload) error { return nil }

func (b *fileBackend) remove(_ context.Context, key string) error {
	if err := os.Remove(b.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return b.wrap("removing", key, err)
	}
	// Drop the jar's directory when it is empty; errors are harmless.
	_ = os.Remove(filepath.Dir(b.path(key)))
	return nil
}

func (b *fileBackend) wrap(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errdefs.New(errdefs.NotFound, fmt.Errorf("%s %s: %w: %w", op, b.name(key), ErrNotFound, err))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errdefs.New(errdefs.Timeout, fmt.Errorf("%s %s: %w", op, b.name(key), err))
	}
	return errdefs.New(errdefs.CantWrite, fmt.Errorf("%s %s: %w", op, b.name(key), err))
}
