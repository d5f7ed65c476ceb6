// Package sitepkgstest builds small wheels for tests of the packages that
// install them (sitepkgs, layers, s3store).
package sitepkgstest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/lock"
)

// File is a member of a test wheel.
type File struct {
	Name, Body string
	Mode       fs.FileMode // the zip's mode; 0 is 0644
}

// Wheel returns the bytes of the wheel dist-version with files, plus its
// METADATA, WHEEL and a RECORD of them all.
func Wheel(t testing.TB, dist, version string, files ...File) []byte {
	t.Helper()
	return WheelTagged(t, dist, version, "py3-none-any", true, files...)
}

// Zip zips files as they are (no RECORD added), deflated.
func Zip(t testing.TB, files ...File) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.Body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Artifact writes data to dir/<sha256> (as the resolver's cache names a
// blob) and returns its lock entry as the wheel file (a PEP 427 name) and
// the path.
func Artifact(t testing.TB, dir, file string, data []byte) (lock.Artifact, string) {
	t.Helper()
	w, err := wheel.ParseFilename(file)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	sum := hex.EncodeToString(s[:])
	p := filepath.Join(dir, sum)
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return lock.Artifact{Kind: lock.KindWheel, File: file, Name: lock.NormalizeProject(w.Distribution), Version: strings.ToLower(w.Version),
		Repository: "https://pypi.org/simple/", Sha256: sum, Size: int64(len(data))}, p
}

// PythonInputs are the inputs.python of a test lock with wheels.
func PythonInputs() *lock.PythonInputs {
	return &lock.PythonInputs{Version: "3.11", Platforms: []string{"manylinux_2_17_x86_64"}, Requirements: []string{}, Indexes: []string{"https://pypi.org/simple/"}}
}

// AddWheels writes wheels (file name -> bytes) as cache blobs under a
// temporary directory, adds them to lf with PythonInputs, normalizes and
// checks lf, and returns their paths index for index of lf.Wheels().
func AddWheels(t testing.TB, lf *lock.File, wheels map[string][]byte) []string {
	t.Helper()
	blobs := t.TempDir()
	byFile := map[string]string{}
	for file, data := range wheels {
		a, p := Artifact(t, blobs, file, data)
		lf.Artifacts = append(lf.Artifacts, a)
		byFile[file] = p
	}
	lf.Inputs.Python = PythonInputs()
	lf.Normalize()
	if err := lf.Check(); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, a := range lf.Wheels() {
		paths = append(paths, byFile[a.File])
	}
	return paths
}
