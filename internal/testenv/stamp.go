package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Live reports whether the live oracles must re-ask their real program
// even when their inputs are unchanged (PREBAKE_LIVE=1: make test-live).
func Live() bool { return os.Getenv("PREBAKE_LIVE") == "1" }

// Stamp is the record of a live oracle's last passing run: a hash of its
// inputs (source files, goldens, the versions of the programs it asks),
// committed beside its goldens. A live oracle whose inputs hash to the
// recorded stamp re-asks nothing (its goldens stand, and the unit tier
// replays them); one whose inputs changed runs live and, when it passes,
// records the new stamp (commit it with the goldens).
type Stamp struct {
	file string
	sum  string
}

// NewStamp hashes the inputs: paths (files, directories walked, or globs,
// relative to the module root; a glob's or a directory's _test.go files are
// left out, a file named is not; a missing one hashes as missing; a file
// named STAMP, another oracle's stamp, is never an input) and literal values
// such as versions. The stamp is kept in file (relative to the module root).
func NewStamp(t testing.TB, file string, paths []string, values ...string) *Stamp {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, v := range values {
		fmt.Fprintf(h, "value %q\n", v)
	}
	for _, p := range paths {
		var files []string
		matches := []string{filepath.Join(root, p)}
		if strings.ContainsAny(p, "*?[") {
			matches, _ = filepath.Glob(filepath.Join(root, p))
		}
		for _, m := range matches {
			_ = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
				named := path == m && !strings.ContainsAny(p, "*?[")
				if err == nil && d.Type().IsRegular() && path != filepath.Join(root, file) && d.Name() != "STAMP" &&
					(named || !strings.HasSuffix(path, "_test.go")) {
					files = append(files, path)
				}
				return nil
			})
		}
		slices.Sort(files)
		fmt.Fprintf(h, "path %q %d\n", p, len(files))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "file %q %x\n", filepath.ToSlash(rel), sum)
		}
	}
	return &Stamp{file: filepath.Join(root, file), sum: hex.EncodeToString(h.Sum(nil))}
}

// Fresh reports whether the recorded stamp matches the inputs and the live
// run is not forced (Live).
func (s *Stamp) Fresh() bool {
	b, err := os.ReadFile(s.file)
	return err == nil && strings.TrimSpace(string(b)) == s.sum && !Live()
}

// Record writes the stamp, its directory made (call it when the live run
// passed).
func (s *Stamp) Record() error {
	if err := os.MkdirAll(filepath.Dir(s.file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(s.file, []byte(s.sum+"\n"), 0o644)
}

// String is the stamp's hash.
func (s *Stamp) String() string { return s.sum }

// ModuleRoot is the directory of go.mod above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
