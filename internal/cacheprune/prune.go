// Package cacheprune removes what a local prebake cache no longer needs:
// jar blobs, built image layers, retrieve directories and edited copies not
// used for a while (by age), the oldest of them first until the cache fits
// a size (by size), and the bookkeeping of what it removed (index entries,
// stamps) and of downloads (download-lock and 404 files, temp files).
// Blobs that a kept lock names are never removed.
//
// The layout is the resolver's and the layer cache's (README, "Cache
// layout"). Age is a file's modification time: a layer's key file is
// touched on every cache hit; a blob's time is when it was written.
package cacheprune

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prebake/prebake/errdefs"
)

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

// entry is one removable unit: a blob, a layer (its key file and blob), a
// retrieve directory or a rewrite file.
type entry struct {
	kind  string // "blob", "layer", "retrieve", "rewrite"
	paths []string
	size  int64
	used  time.Time
	sha   string // blob: its sha256
}

// Prune prunes the cache at dir. A missing cache is an empty report.
func Prune(dir string, o Options) (*Report, error) {
	if o.OlderThan <= 0 && o.MaxSize <= 0 {
		return nil, errdefs.Optionf(errdefs.BadArgument, "cacheprune.Options", "give an age or a size limit (or both)")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	rep := &Report{Cache: dir, DryRun: o.DryRun}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err != nil && errors.Is(err, fs.ErrNotExist) {
			return rep, nil
		}
		return nil, errdefs.Errorf(errdefs.NotFound, "cache %s: not a directory", dir)
	}
	entries, err := scan(dir)
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
		if !old && !big {
			continue
		}
		if err := remove(e.paths, o.DryRun); err != nil {
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
	if err := pruneBookkeeping(dir, removed, now, o, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// scan lists the removable entries of the cache at dir.
func scan(dir string) ([]*entry, error) {
	var out []*entry
	// Jar blobs.
	blobs, err := readDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		return nil, err
	}
	for _, d := range blobs {
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, &entry{kind: "blob", paths: []string{filepath.Join(dir, "blobs", "sha256", d.Name())}, size: fi.Size(), used: fi.ModTime(), sha: d.Name()})
		}
	}
	// Layers: <key>.json names a blob; a blob no key names is an entry of
	// its own (a bake that failed after writing it).
	ldir := filepath.Join(dir, "layers")
	keys, err := readDir(ldir)
	if err != nil {
		return nil, err
	}
	named := map[string]*entry{}
	for _, d := range keys {
		if !strings.HasSuffix(d.Name(), ".json") || d.IsDir() {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue
		}
		e := &entry{kind: "layer", paths: []string{filepath.Join(ldir, d.Name())}, size: fi.Size(), used: fi.ModTime()}
		if digest := layerDigest(filepath.Join(ldir, d.Name())); digest != "" {
			if prev, ok := named[digest]; ok {
				// Two keys, one blob: the blob goes with the later one.
				prev.paths = append(prev.paths, e.paths...)
				if e.used.After(prev.used) {
					prev.used = e.used
				}
				continue
			}
			bp := filepath.Join(ldir, "blobs", "sha256", digest)
			if bfi, err := os.Stat(bp); err == nil {
				e.paths = append(e.paths, bp)
				e.size += bfi.Size()
			}
			named[digest] = e
		}
		out = append(out, e)
	}
	lblobs, err := readDir(filepath.Join(ldir, "blobs", "sha256"))
	if err != nil {
		return nil, err
	}
	for _, d := range lblobs {
		if _, ok := named[d.Name()]; ok {
			continue
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			out = append(out, &entry{kind: "layer", paths: []string{filepath.Join(ldir, "blobs", "sha256", d.Name())}, size: fi.Size(), used: fi.ModTime()})
		}
	}
	// Retrieve directories and rewrite files.
	for _, sub := range []string{"retrieve", "rewrite"} {
		ds, err := readDir(filepath.Join(dir, sub))
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			p := filepath.Join(dir, sub, d.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			size, used := treeSize(p, fi)
			out = append(out, &entry{kind: sub, paths: []string{p}, size: size, used: used})
		}
	}
	return out, nil
}

// layerDigest is the hex digest a layer key file names ("" if unreadable).
func layerDigest(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
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

// treeSize is the bytes under p and its newest modification time.
func treeSize(p string, fi fs.FileInfo) (int64, time.Time) {
	if !fi.IsDir() {
		return fi.Size(), fi.ModTime()
	}
	var size int64
	used := fi.ModTime()
	_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
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
func pruneBookkeeping(dir string, removed map[string]bool, now time.Time, o Options, rep *Report) error {
	age := o.OlderThan
	if age <= 0 {
		age = 24 * time.Hour
	}
	// Index entries: "sha256 size url"; one whose blob is gone is dropped.
	if len(removed) > 0 {
		err := walkFiles(filepath.Join(dir, "index"), func(p string, _ fs.FileInfo) error {
			if removed[indexSha(p)] {
				rep.IndexFiles++
				return remove([]string{p}, o.DryRun)
			}
			return nil
		})
		if err != nil {
			return err
		}
		stamps, _ := readDir(filepath.Join(dir, "stamps"))
		for _, u := range stamps {
			for sha := range removed {
				p := filepath.Join(dir, "stamps", u.Name(), sha)
				if _, err := os.Lstat(p); err == nil {
					if err := remove([]string{p}, o.DryRun); err != nil {
						return err
					}
				}
			}
		}
	}
	// Download locks and 404 records.
	err := walkFiles(filepath.Join(dir, "locks"), func(p string, fi fs.FileInfo) error {
		if now.Sub(fi.ModTime()) <= age {
			return nil
		}
		switch {
		case strings.HasSuffix(p, ".404"):
		case strings.HasSuffix(p, ".lock"):
			if held(p) {
				return nil
			}
		default:
			return nil
		}
		rep.LockFiles++
		return remove([]string{p}, o.DryRun)
	})
	if err != nil {
		return err
	}
	// Temp files of downloads that died.
	return walkFiles(filepath.Join(dir, "tmp"), func(p string, fi fs.FileInfo) error {
		if now.Sub(fi.ModTime()) <= age {
			return nil
		}
		rep.TempFiles++
		return remove([]string{p}, o.DryRun)
	})
}

// indexSha is the sha256 an index entry names ("" if unreadable).
func indexSha(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString(' ')
	return strings.TrimSpace(line)
}

// held reports whether a process holds the download lock at p.
func held(p string) bool {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// walkFiles calls fn for each regular file under root (a missing root is
// nothing to walk).
func walkFiles(root string, fn func(string, fs.FileInfo) error) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
			return fn(p, fi)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", root, err))
	}
	return nil
}

// readDir is os.ReadDir with a missing directory empty.
func readDir(p string) ([]fs.DirEntry, error) {
	ds, err := os.ReadDir(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", p, err))
	}
	return ds, nil
}

// remove removes paths (directories with what they hold), unless dryRun.
func remove(paths []string, dryRun bool) error {
	if dryRun {
		return nil
	}
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("pruning %s: %w", p, err))
		}
	}
	return nil
}
