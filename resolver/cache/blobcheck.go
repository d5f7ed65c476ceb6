package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/lock"
)

// ErrCorruptBlob is matched (errors.Is) when a cache blob's bytes do not
// hash to its name: it was modified after prebake wrote it.
var ErrCorruptBlob = lock.ErrCorruptBlob

// A blob is trusted without reading it only while it carries a stamp:
//
//	<dir>/stamps/<uid>/<hex>    "size mtime-ns ctime-ns inode device\n"
//
// written by this user when it wrote or last hashed the blob. Rewriting a
// blob in place changes its ctime (which no unprivileged user can set
// back), replacing it changes its inode, so a blob whose stat no longer
// matches its stamp is hashed again. The stamp directory is the user's own
// (mode 0700, owned by the uid, checked on every use): other users of a
// shared cache cannot forge stamps, so what they write into the cache is
// always hashed before it is used. Without a usable stamp directory (a
// read-only cache, another user's cache) every use hashes.

// stampDir is the current user's stamp directory, "" when it cannot be
// used (missing and not creatable, not ours, or open to others).
func StampDir(cacheDir string, create bool) string {
	d := cachedir.At(cacheDir).Stamps(os.Getuid())
	info, err := os.Lstat(d)
	if errors.Is(err, os.ErrNotExist) && create {
		_ = os.Mkdir(filepath.Dir(d), 0o755) // not the cache itself: openCache makes it, with its mode
		if merr := os.Mkdir(d, 0o700); merr == nil || errors.Is(merr, os.ErrExist) {
			info, err = os.Lstat(d)
		}
	}
	if err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 || !ownedByMe(info) {
		return ""
	}
	return d
}

// stampOf is the stat line a stamp holds for a blob ("" when the platform
// gives no inode or ctime).
func stampOf(info os.FileInfo) string {
	ino, dev, ctime, ok := statIDs(info)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %d %d %d %d\n", info.Size(), info.ModTime().UnixNano(), ctime, ino, dev)
}

// stamped reports whether the blob at path (stat info) carries a
// matching stamp in dir.
func Stamped(dir, sum string, info os.FileInfo) bool {
	if dir == "" {
		return false
	}
	want := stampOf(info)
	if want == "" {
		return false
	}
	got, err := os.ReadFile(filepath.Join(dir, sum))
	return err == nil && string(got) == want
}

// writeStamp records the blob's current stat (best effort: without it the
// next use hashes again).
func writeStamp(dir, sum, path string) {
	if dir == "" {
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		return
	}
	s := stampOf(info)
	if s == "" {
		return
	}
	f, err := os.CreateTemp(dir, ".st-*")
	if err != nil {
		return
	}
	_, werr := f.WriteString(s)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(dir, sum)) != nil {
		os.Remove(f.Name())
	}
}

// VerifyBlob checks that the cache blob named sum is a regular file of
// size bytes (size < 0: any) whose content hashes to sum: by its stamp
// when it has a matching one, else by reading it (and then stamping it).
// A missing blob matches os.ErrNotExist (errdefs.NotFound); a blob of the
// wrong size or content matches ErrCorruptBlob (errdefs.Invalid). Every
// command checks blobs this way before their bytes leave the cache (bake,
// upload, retrieve, the paths resolve prints).
func VerifyBlob(cacheDir, sum string, size int64) error {
	cacheDir = Dir(cacheDir)
	return VerifyFile(StampDir(cacheDir, true), BlobPath(cacheDir, sum), sum, size)
}

func VerifyFile(stamps, path, sum string, size int64) error {
	info, err := os.Stat(path)
	if err != nil {
		return errdefs.New(errdefs.NotFound, fmt.Errorf("cache blob %s: %w", path, err))
	}
	if !info.Mode().IsRegular() || (size >= 0 && info.Size() != size) {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s has %d bytes, want %d", ErrCorruptBlob, path, info.Size(), size))
	}
	if Stamped(stamps, sum, info) {
		return nil
	}
	got, _, err := digest.File(path)
	if err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("reading cache blob %s: %w", path, err))
	}
	if got != sum {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s hashes to %s", ErrCorruptBlob, path, got))
	}
	writeStamp(stamps, sum, path)
	return nil
}
