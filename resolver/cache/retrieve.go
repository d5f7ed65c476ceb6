package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/prebake/prebake/lock"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/safepath"
)

// Retrieve materialises the lock's jars under their Spark file names in
// <cache>/retrieve/<lock hash>/ (<cache> is the user's cache in cacheDir:
// cachedir.Root), for client-mode file: paths. The retrieve directory and
// every directory above it must be the user's or root's and open to no one
// else (cachedir.Check; else errdefs.CantWrite naming it and its owner), so
// the paths handed to Spark cannot be swapped by another user. The files
// are hard links to the cache's blobs (copies when linking fails); the
// directory appears atomically (built beside it, then renamed), so a
// reader never sees it half made. Every blob must already be in the cache
// (FetchLocked) and verify (VerifyBlob: a modified blob is an
// errdefs.Invalid error); an existing directory whose files no longer match the
// lock is rebuilt, one that does is reused and its time set to now (the
// grace of cacheprune.Recent for a prune by size counts from the last
// Retrieve). paths
// are in lock order.
func Retrieve(ctx context.Context, lock *lock.File, cacheDir string) (dir string, paths []string, err error) {
	cacheDir = Dir(cacheDir)
	if err := lock.Check(); err != nil {
		return "", nil, errdefs.New(errdefs.Invalid, err)
	}
	// The retrieve directory is spark.jars' file: paths: jars only.
	if err := lock.JarsOnly("retrieve"); err != nil {
		return "", nil, err
	}
	root := cachedir.At(cacheDir).Dir(cachedir.DirRetrieve)
	dir = filepath.Join(root, lock.Hash())
	jars := lock.Jars()
	paths = make([]string, len(jars))
	for i, a := range jars {
		if paths[i], err = safepath.Join(dir, a.File); err != nil {
			return "", nil, errdefs.New(errdefs.Invalid, fmt.Errorf("retrieve: %w", err))
		}
	}
	if err := cachedir.Make(root); err != nil && !cachedir.Tolerable(err) {
		return "", nil, fmt.Errorf("retrieve dir: %w", err)
	}
	stamps := StampDir(cacheDir, true)
	if complete(dir, lock, cacheDir, stamps) {
		// Reused: dated now, so that a prune by size keeps it for its
		// grace (cacheprune.Recent) after the paths are handed out
		// again. A failure only shortens that grace.
		now := time.Now()
		_ = os.Chtimes(dir, now, now)
		return dir, paths, nil
	}
	tmp, err := os.MkdirTemp(root, ".tmp-")
	if err != nil {
		return "", nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("retrieve dir %s: %w", root, err))
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	for _, a := range jars {
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
		blob := BlobPath(cacheDir, a.Sha256)
		if err := VerifyFile(stamps, blob, a.Sha256, a.Size); errors.Is(err, os.ErrNotExist) {
			return "", nil, errdefs.Errorf(errdefs.NotFound, "retrieve %s: blob %s is not in the cache %s (fetch the lock first): %w", a.File, a.Sha256, cacheDir, ErrNotFound)
		} else if err != nil {
			return "", nil, fmt.Errorf("retrieve %s: %w", a.File, err)
		}
		dst, err := safepath.Join(tmp, a.File)
		if err != nil {
			return "", nil, errdefs.New(errdefs.Invalid, fmt.Errorf("retrieve: %w", err))
		}
		if err := linkOrCopy(blob, dst); err != nil {
			return "", nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("retrieve %s: %w", a.File, err))
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", nil, errdefs.New(errdefs.CantWrite, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process made it first (rename onto a non-empty dir fails).
		if complete(dir, lock, cacheDir, stamps) {
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
		if complete(dir, lock, cacheDir, stamps) {
			return dir, paths, nil
		}
		return "", nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("retrieve dir %s: %w", dir, err))
	}
	return dir, paths, nil
}

// complete reports whether dir holds every file of lock with its content:
// a hard link to a blob that verifies (by its stamp), else a copy whose
// bytes hash to the lock's sha256. A directory with a file modified or
// replaced is not complete, and is rebuilt.
func complete(dir string, lock *lock.File, cacheDir, stamps string) bool {
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() || !checked(dir) {
		return false
	}
	for _, a := range lock.Jars() {
		file := filepath.Join(dir, a.File)
		info, err := os.Stat(file)
		if err != nil || info.Size() != a.Size {
			return false
		}
		blob := BlobPath(cacheDir, a.Sha256)
		if bi, err := os.Stat(blob); err == nil && os.SameFile(info, bi) {
			if !cachedir.TrustedOwner(bi) || VerifyFile(stamps, blob, a.Sha256, a.Size) != nil {
				return false
			}
		} else if VerifyFile("", file, a.Sha256, a.Size) != nil {
			return false
		}
	}
	return true
}

// linkOrCopy hard-links src (a blob) to dst when the user or root owns
// it, else copies it: the owner of a linked file could change its bytes
// after they were checked.
func linkOrCopy(src, dst string) error {
	if info, err := os.Stat(src); err == nil && cachedir.TrustedOwner(info) {
		if err := os.Link(src, dst); err == nil {
			return nil
		}
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

// checked reports whether dir passes cachedir.Check (a tolerable warning
// included: openCache prints it).
func checked(dir string) bool {
	err := cachedir.Check(dir)
	return err == nil || cachedir.Tolerable(err)
}
