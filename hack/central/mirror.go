package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// The recorded mirror (POMs, version lists, placeholder jars) is committed
// as one gzipped tar, testdata/central/mirror.tar.gz: POMs compress about
// tenfold, and the suite's mirror stays around a megabyte.
const (
	mirrorArchive  = "mirror.tar.gz"
	maxMirrorFile  = 4 << 20  // a recorded POM or metadata file
	maxMirrorTotal = 64 << 20 // the whole mirror, unpacked
)

// packMirror writes dir as a reproducible gzipped tar (sorted entries, no
// times, no owners) to archive.
func packMirror(dir, archive string) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	tmp := archive + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return err
	}
	tw := tar.NewWriter(zw)
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			f.Close()
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(data); err != nil {
			f.Close()
			return err
		}
	}
	for _, c := range []io.Closer{tw, zw, f} {
		if err := c.Close(); err != nil {
			return err
		}
	}
	return os.Rename(tmp, archive)
}

// unpackMirror extracts archive into dir. Entries must be regular files
// whose paths stay under dir; sizes are bounded.
func unpackMirror(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("%s: entry %q: want a regular file under the mirror", archive, h.Name)
		}
		if total += h.Size; h.Size > maxMirrorFile || total > maxMirrorTotal {
			return fmt.Errorf("%s: entry %q: the mirror exceeds its bounds (%d bytes a file, %d in all)", archive, h.Name, maxMirrorFile, maxMirrorTotal)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return fmt.Errorf("%s: %s: %w", archive, h.Name, err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
}
