// Package sitepkgs merges a lock's wheels into one site-packages tree, the
// Python half of a set as both deliveries ship it: an image layer
// (package layers) and a relocatable archive (package s3store).
//
// Stage checks each wheel's bytes against the lock (sha256 and size, read
// from the same open file that is then installed), installs it with
// internal/wheel (no script runs; .data/scripts, .data/data and
// .data/headers are verified and skipped) into a staging directory of its
// own, and merges the installed files into one sorted list of entries,
// each naming the staged file that holds its bytes: nothing is copied
// twice. With Streaming nothing is staged at all: each entry is read from
// its wheel when it is opened (wheel.Plan), and a Prefetcher reads the
// entries ahead of a writer on every core. Two wheels that install the
// same path are ErrConflict naming both, unless the two files are byte-for-byte the same with the same mode
// (a legacy pkg_resources namespace package's __init__.py, which pip also
// lets one wheel overwrite with the other's identical copy); a file of one
// wheel where another needs a directory is ErrConflict too.
//
// WriteArchive writes the tree as a tar.gz whose bytes depend only on the
// entries and the epoch: entries sorted, parent directories included,
// uid/gid 0, no user names, modes 0644/0755 (directories 0755), every
// mtime the epoch, a gzip header with no name and no mtime, and a pinned
// compressor (klauspost/compress gzip, level 6).
package sitepkgs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/lock"
)

// ErrConflict is matched (errors.Is) when two wheels install the same path
// with different bytes, or one a file where another needs a directory.
var ErrConflict = errors.New("two wheels install the same path")

// Wheel is one wheel to install: its lock entry's file, sha256 and size,
// and the local file holding it (the resolver's cache blob).
type Wheel struct {
	File   string // the PEP 427 file name
	Sha256 string // hex, as the lock says
	Size   int64
	Path   string // the local file
}

// WheelsOf pairs the lock's wheels (lf.Wheels(), lock order) with their
// local paths, index for index.
func WheelsOf(lf *lock.File, paths []string) ([]Wheel, error) {
	ws := lf.Wheels()
	if len(paths) != len(ws) {
		return nil, errdefs.Errorf(errdefs.Internal, "%d local paths for %d wheels", len(paths), len(ws))
	}
	out := make([]Wheel, len(ws))
	for i, a := range ws {
		out[i] = Wheel{File: a.File, Sha256: a.Sha256, Size: a.Size, Path: paths[i]}
	}
	return out, nil
}

// Entry is one file of the merged tree.
type Entry struct {
	Path string // relative to the tree's root, slash-separated
	// Src is the staged file holding its bytes; "" for a file read from
	// its wheel (Streaming).
	Src    string
	Mode   fs.FileMode // 0644 or 0755
	Size   int64
	Sha256 string // hex
	Wheel  string // the wheel that installed it
	open   func() (io.ReadCloser, error)
}

// Open opens the entry's bytes: its staged file, or (Streaming) its wheel's
// member, inflated as it is read and checked against the wheel's RECORD at
// its end.
func (e Entry) Open() (io.ReadCloser, error) {
	if e.open != nil {
		return e.open()
	}
	return os.Open(e.Src)
}

// Tree is the merged site-packages tree: its files sorted by Path, and the
// wheels that made it, in lock order.
type Tree struct {
	Entries []Entry
	Wheels  []string
	// closers are the wheels a streaming tree reads from.
	closers []io.Closer
}

// Close closes the wheels a tree staged with Streaming reads its files from
// (a no-op for one staged on disk).
func (t *Tree) Close() error {
	var errs []error
	for _, c := range t.closers {
		errs = append(errs, c.Close())
	}
	t.closers = nil
	return errors.Join(errs...)
}

// StageOption configures Stage.
type StageOption func(*stageOptions) error

type stageOptions struct{ streaming bool }

// Streaming stages no copy of a wheel's files: each entry is read from its
// wheel when it is opened (Entry.Open), checked against the wheel's RECORD
// as it is read, so a layer writer that reads every entry once (and fails
// on a read error) writes the tree without writing it twice. The tree
// keeps the wheels open until Tree.Close. A wheel whose installed bytes
// are not its members' (wheel.ErrNotStreamable) is installed under
// staging as without the option. Entry.Sha256 is then RECORD's digest,
// which the read checks; the entries' sizes, modes and digests are the
// same as a staged tree's.
func Streaming() StageOption { return func(o *stageOptions) error { o.streaming = true; return nil } }

// Stage installs wheels, in order, each under staging/<index>, and merges
// them (see the package comment). staging must be an existing directory
// the caller removes; on an error nothing is left under it but what the
// caller removes with it. A wheel whose bytes are not the lock's is
// errdefs.Invalid matching lock.ErrCorruptBlob; a refused wheel is what
// wheel.Install returns (errdefs.Invalid naming the wheel and member); a
// conflict errdefs.Invalid matching ErrConflict.
func Stage(ctx context.Context, wheels []Wheel, staging string, epoch time.Time, opts ...StageOption) (tree *Tree, err error) {
	var o stageOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	t := &Tree{Entries: []Entry{}, Wheels: make([]string, 0, len(wheels))}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	byPath := map[string]int{}
	for i, w := range wheels {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		root := filepath.Join(staging, strconv.Itoa(i))
		in, planned, err := installVerified(ctx, w, root, epoch, o.streaming, t)
		if err != nil {
			return nil, err
		}
		t.Wheels = append(t.Wheels, w.File)
		for _, f := range in.Files {
			e := Entry{Path: f.Path, Mode: f.Mode, Size: f.Size, Sha256: hex.EncodeToString(f.SHA256[:]), Wheel: w.File}
			if planned != nil {
				p := f.Path
				e.open = func() (io.ReadCloser, error) { return planned.Open(p) }
			} else {
				e.Src = filepath.Join(root, filepath.FromSlash(f.Path))
			}
			if j, ok := byPath[e.Path]; ok {
				if o := t.Entries[j]; o.Sha256 == e.Sha256 && o.Mode == e.Mode {
					continue // the same bytes: either copy will do
				}
				return nil, conflict(e.Path, t.Entries[j].Wheel, w.File, "different files")
			}
			byPath[e.Path] = len(t.Entries)
			t.Entries = append(t.Entries, e)
		}
	}
	slices.SortFunc(t.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	// A file where another wheel has a directory: some entry's path is a
	// parent directory of another's.
	for _, e := range t.Entries {
		for d := path.Dir(e.Path); d != "."; d = path.Dir(d) {
			if _, ok := byPath[d]; ok {
				return nil, conflict(d, findEntry(t, d).Wheel, e.Wheel, "a file in one, a directory in the other")
			}
		}
	}
	return t, nil
}

// findEntry returns the entry at path p, which t.Entries (sorted) has.
func findEntry(t *Tree, p string) Entry {
	i, _ := slices.BinarySearchFunc(t.Entries, p, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	return t.Entries[i]
}

func conflict(p, first, second, what string) error {
	return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s is installed by both %s and %s (%s); a set whose wheels overlap cannot be merged into one site-packages tree",
		ErrConflict, coordpart.Quote(p), coordpart.Quote(first), coordpart.Quote(second), what))
}

// installVerified opens w, checks its bytes against the lock and installs
// the same open file into root; or, streaming, plans it (the file is kept
// open, closed with t) unless it is not streamable.
func installVerified(ctx context.Context, w Wheel, root string, epoch time.Time, streaming bool, t *Tree) (*wheel.Installed, *wheel.Planned, error) {
	if err := safeName(w.File); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(w.Path)
	if err != nil {
		// Only a missing file is NotFound; one that is there but cannot
		// be read is CantWrite, as resolver/cache reports an unreadable
		// cache blob (VerifyFile).
		kind := errdefs.CantWrite
		if errors.Is(err, fs.ErrNotExist) {
			kind = errdefs.NotFound
		}
		return nil, nil, errdefs.New(kind, fmt.Errorf("wheel %s: %w", w.File, err))
	}
	kept := false
	defer func() {
		if !kept {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("wheel %s: %w", w.File, err))
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errdefs.Errorf(errdefs.Invalid, "wheel %s at %s: not a regular file", w.File, w.Path)
	}
	sum, n, err := digest.Reader(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		return nil, nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("reading wheel %s at %s: %w", w.File, w.Path, err))
	}
	if sum != w.Sha256 || n != w.Size {
		return nil, nil, errdefs.New(errdefs.Invalid, fmt.Errorf("wheel %s at %s: %w: sha256 %s and %d bytes, the lock says %s and %d bytes", w.File, w.Path, lock.ErrCorruptBlob, sum, n, w.Sha256, w.Size))
	}
	if streaming {
		p, err := wheel.Plan(ctx, f, n, w.File, wheel.WithEpoch(epoch))
		switch {
		case err == nil:
			kept = true
			t.closers = append(t.closers, f)
			return &p.Installed, p, nil
		case !errors.Is(err, wheel.ErrNotStreamable):
			return nil, nil, err
		}
	}
	in, err := wheel.Install(ctx, f, n, w.File, root, wheel.WithEpoch(epoch))
	return in, nil, err
}

// safeName refuses a wheel file name that is not a bare PEP 427 name.
func safeName(file string) error {
	if _, err := wheel.ParseFilename(file); err != nil {
		return err
	}
	return nil
}

// Dirs returns every directory of the tree (every parent of an entry),
// sorted, without the root.
func (t *Tree) Dirs() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range t.Entries {
		for d := path.Dir(e.Path); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// Size is the total size of the tree's files.
func (t *Tree) Size() int64 {
	var n int64
	for _, e := range t.Entries {
		n += e.Size
	}
	return n
}
