package main

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMirrorRoundTrip(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"g/a/1/a-1.pom": "<project/>", "g/a/maven-metadata.xml": "<metadata/>", "g/a/1/a-1.jar": ""}
	for rel, data := range files {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a1, a2 := filepath.Join(t.TempDir(), "m1.tar.gz"), filepath.Join(t.TempDir(), "m2.tar.gz")
	if err := packMirror(src, a1); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := unpackMirror(a1, dst); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rel := range files {
		b, err := os.ReadFile(filepath.Join(dst, rel))
		if err != nil {
			t.Fatal(err)
		}
		got[rel] = string(b)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Error(diff)
	}
	// Reproducible: packing the unpacked mirror gives the same bytes.
	if err := packMirror(dst, a2); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(a1)
	b2, _ := os.ReadFile(a2)
	if string(b1) != string(b2) {
		t.Error("packing the same mirror twice gave different archives")
	}
}

func TestUnpackMirrorHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  tar.Header
		want string
	}{
		{"parent escape", tar.Header{Name: "../evil.pom", Typeflag: tar.TypeReg, Size: 1}, "want a regular file under the mirror"},
		{"absolute", tar.Header{Name: "/etc/evil.pom", Typeflag: tar.TypeReg, Size: 1}, "want a regular file under the mirror"},
		{"symlink", tar.Header{Name: "g/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, "want a regular file under the mirror"},
		{"too big", tar.Header{Name: "g/big.pom", Typeflag: tar.TypeReg, Size: maxMirrorFile + 1}, "exceeds its bounds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive := filepath.Join(t.TempDir(), "m.tar.gz")
			f, err := os.Create(archive)
			if err != nil {
				t.Fatal(err)
			}
			zw := gzip.NewWriter(f)
			tw := tar.NewWriter(zw)
			hdr := tc.hdr
			hdr.Mode = 0o644
			if err := tw.WriteHeader(&hdr); err != nil {
				t.Fatal(err)
			}
			tw.Write(make([]byte, hdr.Size))
			tw.Close()
			zw.Close()
			f.Close()
			dir := t.TempDir()
			err = unpackMirror(archive, dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil.pom")); err == nil {
				t.Error("an entry was written outside the mirror")
			}
		})
	}
}
