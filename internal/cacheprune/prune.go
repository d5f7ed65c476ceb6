// Package cacheprune removes what a local prebake cache no longer needs:
// jar blobs, built image layers, retrieve directories and edited copies not
// used for a while (by age), the oldest of them first until the cache fits
// a size (by size), and the bookkeeping of what it removed (index entries,
// stamps) and of downloads (download-lock and 404 files, temp files).
// Blobs that a kept lock names are never removed, nor, by size, retrieve
// directories and edited copies made in the last hour (Recent): a job may
// be using the paths a rewrite just printed.
//
// The layout is the resolver's and the layer cache's (README, "Cache
// layout"). Age is a file's modification time: a layer's key file is
// touched on every cache hit; a blob's time is when it was written.
//
// Pruning deletes only inside the cache. Every directory it enters
// (blobs/sha256, layers, retrieve, rewrite, index, stamps, locks, tmp) must
// pass cachedir.Check, as for every other command that uses the cache: one
// that fails (another user's directory or symbolic link, a directory open
// to others) stops the prune before anything is removed, with Check's
// error (errdefs.CantWrite). Each is then opened without following a
// symbolic link (a link of the user's or root's there is skipped, with a
// warning), and everything is listed and removed relative to it (os.Root):
// a symbolic link found in the cache is removed itself, never what it
// points to, and nothing is reached outside the directory it was found in.
package cacheprune

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/flock"
)

// Recent is how long a retrieve directory or an edited copy is safe from
// the size limit after it was last written: a job started by the rewrite
// that printed its paths may be reading them (audit 4, L3). The age limit
// still removes it when it is older than OlderThan.
const Recent = time.Hour

// Options say what to prune.
type Options struct {
	// OlderThan removes what was not used for this long (0: no age limit).
	OlderThan time.Duration
	// MaxSize removes the oldest entries until blobs, layers, retrieve and
	// rewrite directories take at most this many bytes (0: no size limit).
	MaxSize int64
	// Keep are the sha256 (hex) of blobs never removed (the kept locks').
	Keep map[string]bool
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Now is the time ages are measured from (zero: time.Now()).
	Now time.Time
	// Warnf, when set, is told what is only a warning: a cache directory
	// open to others without the sticky bit (cachedir.Tolerable), a
	// directory of the cache that is a symbolic link (skipped).
	Warnf func(format string, args ...any)
}

// Report is what Prune removed (or, with DryRun, would remove).
type Report struct {
	Cache       string `json:"cache"`
	DryRun      bool   `json:"dryRun"`
	Blobs       int    `json:"blobs"`
	Layers      int    `json:"layers"`
	Retrieve    int    `json:"retrieveDirs"`
	Rewrite     int    `json:"rewriteFiles"`
	LockFiles   int    `json:"lockFiles"`
	IndexFiles  int    `json:"indexEntries"`
	TempFiles   int    `json:"tempFiles"`
	BytesFreed  int64  `json:"bytesFreed"`
	BytesKept   int64  `json:"bytesKept"`
	KeptByLocks int    `json:"keptByLocks"`
}

// areaNames are the directories of the cache prune works in, relative
// to it (the cache's layout: cachedir.Layout).
var areaNames = []string{cachedir.DirBlobs, cachedir.DirLayers, cachedir.DirLayerBlobs, cachedir.DirRetrieve, cachedir.DirRewrite, cachedir.DirIndex, cachedir.DirStamps, cachedir.DirLocks, cachedir.DirTmp}

// target is one file or directory to remove: name in the directory area
// was opened as.
type target struct {
	area *area
	name string // slash-separated, relative to the area
}

// area is a directory of the cache, opened without following a link.
type area struct {
	rel  string
	path string // for messages
	root *os.Root
}

// entry is one removable unit: a blob, a layer (its key file and blob), a
// retrieve directory or a rewrite file.
type entry struct {
	kind    string // "blob", "layer", "retrieve", "rewrite"
	targets []target
	size    int64
	used    time.Time
	sha     string // blob: its sha256
}

// Prune prunes the cache at dir. A missing cache is an empty report; a
// directory of it that cachedir.Check refuses is its error, and nothing is
// removed.
func Prune(dir string, o Options) (*Report, error) {
	if o.OlderThan <= 0 && o.MaxSize <= 0 {
		return nil, errdefs.Optionf(errdefs.BadArgument, "cacheprune.Options", "give an age or a size limit (or both)")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	if o.Warnf == nil {
		o.Warnf = func(string, ...any) {}
	}
	rep := &Report{Cache: dir, DryRun: o.DryRun}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err != nil && errors.Is(err, fs.ErrNotExist) {
			return rep, nil
		}
		return nil, errdefs.Errorf(errdefs.NotFound, "cache %s: not a directory", dir)
	}
	areas, err := openAreas(dir, o.Warnf)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, a := range areas {
			a.root.Close()
		}
	}()
	entries, err := scan(areas)
	if err != nil {
		return nil, err
	}
	// Oldest first: the age limit removes a prefix, the size limit more.
	sort.Slice(entries, func(i, j int) bool { return entries[i].used.Before(entries[j].used) })
	var total int64
	for _, e := range entries {
		total += e.size
	}
	removed := map[string]bool{} // blob sha256s removed
	for _, e := range entries {
		if e.kind == "blob" && o.Keep[e.sha] {
			rep.KeptByLocks++
			continue
		}
		old := o.OlderThan > 0 && now.Sub(e.used) > o.OlderThan
		big := o.MaxSize > 0 && total > o.MaxSize
		if !old && (!big || recent(e, now)) {
			continue
		}
		if err := remove(e.targets, o.DryRun); err != nil {
			return nil, err
		}
		total -= e.size
		rep.BytesFreed += e.size
		switch e.kind {
		case "blob":
			rep.Blobs++
			removed[e.sha] = true
		case "layer":
			rep.Layers++
		case "retrieve":
			rep.Retrieve++
		case "rewrite":
			rep.Rewrite++
		}
	}
	rep.BytesKept = total
	if err := pruneBookkeeping(areas, removed, now, o, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// recent reports whether e is a retrieve directory or an edited copy
// written in the last Recent (kept from the size limit).
func recent(e *entry, now time.Time) bool {
	return (e.kind == "retrieve" || e.kind == "rewrite") && now.Sub(e.used) < Recent
}

// openAreas checks every directory of the cache prune works in
// (cachedir.Check: all of them before anything is removed) and opens those
// that exist. A missing one is absent from the map.
func openAreas(dir string, warnf func(string, ...any)) (map[string]*area, error) {
	warned := map[string]bool{}
	var present []string
	for _, rel := range areaNames {
		err := cachedir.Check(filepath.Join(dir, filepath.FromSlash(rel)))
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			continue
		case cachedir.Tolerable(err):
			if msg := err.Error(); !warned[msg] {
				warned[msg] = true
				warnf("%s", msg)
			}
		default:
			return nil, err
		}
		present = append(present, rel)
	}
	areas := map[string]*area{}
	if len(present) == 0 {
		return areas, nil
	}
	top, err := os.OpenRoot(dir)
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", dir, err))
	}
	defer top.Close()
	for _, rel := range present {
		r, err := openNoFollow(top, dir, rel, warnf)
		if err != nil {
			for _, a := range areas {
				a.root.Close()
			}
			return nil, err
		}
		if r != nil {
			areas[rel] = &area{rel: rel, path: filepath.Join(dir, filepath.FromSlash(rel)), root: r}
		}
	}
	return areas, nil
}

// openNoFollow opens rel (slash-separated) in top one directory at a time,
// each a real directory (Lstat) that is still the one opened: nil when one
// is missing or a symbolic link (skipped, with a warning; one of another
// user's was refused by cachedir.Check).
func openNoFollow(top *os.Root, dir, rel string, warnf func(string, ...any)) (*os.Root, error) {
	cur, err := top.OpenRoot(".")
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", dir, err))
	}
	done := ""
	for _, name := range strings.Split(rel, "/") {
		done = path.Join(done, name)
		p := filepath.Join(dir, filepath.FromSlash(done))
		fi, err := cur.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cur.Close()
			return nil, nil
		case err != nil:
			cur.Close()
			return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", p, err))
		case fi.Mode()&fs.ModeSymlink != 0:
			cur.Close()
			warnf("%s is a symbolic link: not pruned (prune follows no link)", p)
			return nil, nil
		case !fi.IsDir():
			cur.Close()
			return nil, errdefs.New(errdefs.CantWrite, &cachedir.UnsafeError{Path: p, Reason: "not a directory"})
		}
		next, err := cur.OpenRoot(name)
		cur.Close()
		if err != nil {
			return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", p, err))
		}
		if st, err := next.Stat("."); err != nil || !os.SameFile(st, fi) {
			next.Close()
			return nil, errdefs.New(errdefs.CantWrite, &cachedir.UnsafeError{Path: p, Reason: "replaced while prune opened it"})
		}
		cur = next
	}
	return cur, nil
}

// scan lists the removable entries of the cache's areas.
func scan(areas map[string]*area) ([]*entry, error) {
	var out []*entry
	// Jar blobs.
	if a := areas[cachedir.DirBlobs]; a != nil {
		blobs, err := a.readDir()
		if err != nil {
			return nil, err
		}
		for _, d := range blobs {
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
				out = append(out, &entry{kind: "blob", targets: []target{{a, d.Name()}}, size: fi.Size(), used: fi.ModTime(), sha: d.Name()})
			}
		}
	}
	// Layers: <key>.json names a blob; a blob no key names is an entry of
	// its own (a bake that failed after writing it).
	la, lb := areas[cachedir.DirLayers], areas[cachedir.DirLayerBlobs]
	named := map[string]*entry{}
	if la != nil {
		keys, err := la.readDir()
		if err != nil {
			return nil, err
		}
		for _, d := range keys {
			if !strings.HasSuffix(d.Name(), ".json") || !d.Type().IsRegular() {
				continue
			}
			fi, err := d.Info()
			if err != nil {
				continue
			}
			e := &entry{kind: "layer", targets: []target{{la, d.Name()}}, size: fi.Size(), used: fi.ModTime()}
			if digest := layerDigest(la.root, d.Name()); digest != "" {
				if prev, ok := named[digest]; ok {
					// Two keys, one blob: the blob goes with the later one.
					prev.targets = append(prev.targets, e.targets...)
					if e.used.After(prev.used) {
						prev.used = e.used
					}
					continue
				}
				if lb != nil {
					if bfi, err := lb.root.Lstat(digest); err == nil && bfi.Mode().IsRegular() {
						e.targets = append(e.targets, target{lb, digest})
						e.size += bfi.Size()
					}
				}
				named[digest] = e
			}
			out = append(out, e)
		}
	}
	if lb != nil {
		lblobs, err := lb.readDir()
		if err != nil {
			return nil, err
		}
		for _, d := range lblobs {
			// A name starting with "." is a running bake's temp file
			// (.tmp-*), not a blob: never an entry.
			if _, ok := named[d.Name()]; ok || strings.HasPrefix(d.Name(), ".") {
				continue
			}
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
				out = append(out, &entry{kind: "layer", targets: []target{{lb, d.Name()}}, size: fi.Size(), used: fi.ModTime()})
			}
		}
	}
	// Retrieve directories and rewrite files: a symbolic link there is an
	// entry of its own (removed itself).
	for _, sub := range []string{cachedir.DirRetrieve, cachedir.DirRewrite} {
		a := areas[sub]
		if a == nil {
			continue
		}
		ds, err := a.readDir()
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			fi, err := d.Info() // Lstat
			if err != nil {
				continue
			}
			size, used := treeSize(a.root, d.Name(), fi)
			out = append(out, &entry{kind: sub, targets: []target{{a, d.Name()}}, size: size, used: used})
		}
	}
	return out, nil
}

// readDir lists the area (a directory gone meanwhile is empty).
func (a *area) readDir() ([]fs.DirEntry, error) {
	ds, err := fs.ReadDir(a.root.FS(), ".")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", a.path, err))
	}
	return ds, nil
}

// layerDigest is the hex digest the layer key file name in r names (""
// if unreadable).
func layerDigest(r *os.Root, name string) string {
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 1<<20)) // a key file is a few hundred bytes
	_, after, ok := strings.Cut(string(data), `"digest":"sha256:`)
	if !ok {
		return ""
	}
	hex, _, _ := strings.Cut(after, `"`)
	if len(hex) != 64 || strings.ContainsAny(hex, "/\\.") {
		return ""
	}
	return hex
}

// treeSize is the bytes under name in r (fi: its Lstat) and its newest
// modification time. Links are not followed.
func treeSize(r *os.Root, name string, fi fs.FileInfo) (int64, time.Time) {
	if !fi.IsDir() {
		return fi.Size(), fi.ModTime()
	}
	var size int64
	used := fi.ModTime()
	_ = fs.WalkDir(r.FS(), name, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if info.Mode().IsRegular() {
				size += info.Size()
			}
			if info.ModTime().After(used) {
				used = info.ModTime()
			}
		}
		return nil
	})
	return size, used
}

// pruneBookkeeping removes the index entries and stamps of removed blobs,
// download-lock and 404 files older than the age limit (a day when only a
// size is given) that no process holds, and temp files as old.
func pruneBookkeeping(areas map[string]*area, removed map[string]bool, now time.Time, o Options, rep *Report) error {
	age := o.OlderThan
	if age <= 0 {
		age = 24 * time.Hour
	}
	// Index entries: "sha256 size url"; one whose blob is gone is dropped.
	if len(removed) > 0 {
		err := walkFiles(areas[cachedir.DirIndex], func(a *area, p string, _ fs.FileInfo) error {
			if removed[indexSha(a.root, p)] {
				rep.IndexFiles++
				return remove([]target{{a, p}}, o.DryRun)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if a := areas[cachedir.DirStamps]; a != nil {
			users, err := a.readDir()
			if err != nil {
				return err
			}
			for _, u := range users {
				if !u.IsDir() { // a link is not followed
					continue
				}
				for sha := range removed {
					p := u.Name() + "/" + sha
					if _, err := a.root.Lstat(p); err == nil {
						if err := remove([]target{{a, p}}, o.DryRun); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	// Download locks and 404 records.
	err := walkFiles(areas[cachedir.DirLocks], func(a *area, p string, fi fs.FileInfo) error {
		if now.Sub(fi.ModTime()) <= age {
			return nil
		}
		switch {
		case strings.HasSuffix(p, ".404"):
		case strings.HasSuffix(p, ".lock"):
			if held(a.root, p) {
				return nil
			}
		default:
			return nil
		}
		rep.LockFiles++
		return remove([]target{{a, p}}, o.DryRun)
	})
	if err != nil {
		return err
	}
	// Temp files of downloads that died.
	return walkFiles(areas[cachedir.DirTmp], func(a *area, p string, fi fs.FileInfo) error {
		if now.Sub(fi.ModTime()) <= age {
			return nil
		}
		rep.TempFiles++
		return remove([]target{{a, p}}, o.DryRun)
	})
}

// indexSha is the sha256 the index entry p in r names ("" if unreadable).
func indexSha(r *os.Root, p string) string {
	f, err := r.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString(' ')
	return strings.TrimSpace(line)
}

// held reports whether a process holds the download lock p in r.
func held(r *os.Root, p string) bool {
	f, err := r.OpenFile(p, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := flock.TryLock(f)
	if ok {
		flock.Unlock(f)
	}
	return !ok && err == nil
}

// walkFiles calls fn for each regular file under the area a (nil: missing,
// nothing to walk), with its slash-separated path in a. Links are not
// followed.
func walkFiles(a *area, fn func(*area, string, fs.FileInfo) error) error {
	if a == nil {
		return nil
	}
	err := fs.WalkDir(a.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			return fn(a, p, fi)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", a.path, err))
	}
	return nil
}

// remove removes the targets (directories with what they hold, a link
// itself), each inside its area, unless dryRun.
func remove(ts []target, dryRun bool) error {
	if dryRun {
		return nil
	}
	for _, t := range ts {
		if err := t.area.root.RemoveAll(t.name); err != nil {
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("pruning %s: %w", filepath.Join(t.area.path, filepath.FromSlash(t.name)), err))
		}
	}
	return nil
}
