package resolver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/safepath"
)

// Retrieve materialises the lock's jars under their Spark file names in
// <cacheDir>/retrieve/<lock hash>/, for client-mode file: paths. The files
// are hard links to the cache's blobs (copies when linking fails); the
// directory appears atomically (built beside it, then renamed), so a
// reader never sees it half made. Every blob must already be in the cache
// (FetchLocked). paths are in lock order.
func Retrieve(ctx context.Context, lock *Lockfile, cacheDir string) (dir string, paths []string, err error) {
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	if err := lock.check(); err != nil {
		return "", nil, exitcode.New(exitcode.DataErr, err)
	}
	root := filepath.Join(cacheDir, "retrieve")
	dir = filepath.Join(root, lock.Hash())
	paths = make([]string, len(lock.Artifacts))
	for i, a := range lock.Artifacts {
		if paths[i], err = safepath.Join(dir, a.File); err != nil {
			return "", nil, exitcode.New(exitcode.DataErr, fmt.Errorf("retrieve: %w", err))
		}
	}
	if complete(dir, lock) {
		return dir, paths, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", nil, exitcode.New(exitcode.CantCreate, fmt.Errorf("retrieve dir %s: %w", root, err))
	}
	tmp, err := os.MkdirTemp(root, ".tmp-")
	if err != nil {
		return "", nil, exitcode.New(exitcode.CantCreate, fmt.Errorf("retrieve dir %s: %w", root, err))
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	for _, a := range lock.Artifacts {
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
		blob := BlobPath(cacheDir, a.Sha256)
		if info, err := os.Stat(blob); err != nil || info.Size() != a.Size {
			return "", nil, exitcode.Errorf(exitcode.NotFound, "retrieve %s: blob %s is not in the cache %s (fetch the lock first): %w", a.File, a.Sha256, cacheDir, ErrNotFound)
		}
		dst, err := safepath.Join(tmp, a.File)
		if err != nil {
			return "", nil, exitcode.New(exitcode.DataErr, fmt.Errorf("retrieve: %w", err))
		}
		if err := linkOrCopy(blob, dst); err != nil {
			return "", nil, exitcode.New(exitcode.CantCreate, fmt.Errorf("retrieve %s: %w", a.File, err))
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", nil, exitcode.New(exitcode.CantCreate, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process made it first (rename onto a non-empty dir fails).
		if complete(dir, lock) {
			return dir, paths, nil
		}
		// A stale, incomplete directory (not made by us): replace it.
		old := dir + ".old-" + filepath.Base(tmp)
		if err2 := os.Rename(dir, old); err2 == nil {
			os.RemoveAll(old)
			if err3 := os.Rename(tmp, dir); err3 == nil {
				return dir, paths, nil
			}
		}
		if complete(dir, lock) {
			return dir, paths, nil
		}
		return "", nil, exitcode.New(exitcode.CantCreate, fmt.Errorf("retrieve dir %s: %w", dir, err))
	}
	return dir, paths, nil
}

// complete reports whether dir holds every file of lock with its size.
func complete(dir string, lock *Lockfile) bool {
	for _, a := range lock.Artifacts {
		info, err := os.Stat(filepath.Join(dir, a.File))
		if err != nil || info.Size() != a.Size {
			return false
		}
	}
	_, err := os.Stat(dir)
	return err == nil
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
