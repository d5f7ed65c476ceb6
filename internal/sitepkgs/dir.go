package sitepkgs

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
)

// Materialize installs wheels (Stage: each checked against its sha256 and
// size) into one site-packages tree at dst, a directory of a cache: the
// tree is written under a temporary sibling, every file checked again as
// it is copied, and renamed into place, so that dst is whole or absent.
// When dst exists already (an earlier or a concurrent run made it),
// nothing is written. dst's parent is created (0755).
func Materialize(ctx context.Context, wheels []Wheel, dst string, epoch time.Time) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-"+filepath.Base(dst)+"-")
	if err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(tmp)
	t, err := Stage(ctx, wheels, filepath.Join(tmp, "stage"), epoch)
	if err != nil {
		return err
	}
	out := filepath.Join(tmp, "tree")
	if err := t.WriteDir(ctx, out); err != nil {
		return err
	}
	if err := os.Chmod(out, 0o755); err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	if err := os.Rename(out, dst); err != nil {
		if _, serr := os.Stat(dst); serr == nil {
			return nil // another run renamed its own copy first
		}
		return errdefs.New(errdefs.CantWrite, err)
	}
	return nil
}

// WriteDir writes the tree's files under dir (created, with its parent
// directories 0755, files 0644 or 0755), each copied from its staged file
// and checked against its installed sha256 and size. dir must not exist.
func (t *Tree) WriteDir(ctx context.Context, dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	for _, d := range t.Dirs() {
		p, err := safepath.Join(dir, d)
		if err != nil {
			return errdefs.New(errdefs.Invalid, err)
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return errdefs.New(errdefs.CantWrite, err)
		}
	}
	buf := make([]byte, 256<<10)
	for _, e := range t.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := safepath.Join(dir, e.Path)
		if err != nil {
			return errdefs.New(errdefs.Invalid, err)
		}
		mode := fs.FileMode(0o644)
		if e.Mode&0o111 != 0 {
			mode = 0o755
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("%s (from %s): %w", e.Path, e.Wheel, err))
		}
		err = copyVerified(f, e, buf)
		if cerr := f.Close(); err == nil && cerr != nil {
			err = errdefs.New(errdefs.CantWrite, cerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
