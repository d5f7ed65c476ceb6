package sitepkgs_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/lock"
)

type W = sitepkgstest.File

func stage(t *testing.T, files map[string][]byte) (*sitepkgs.Tree, error) {
	t.Helper()
	blobs := t.TempDir()
	var ws []sitepkgs.Wheel
	for _, name := range slices.Sorted(maps.Keys(files)) {
		a, p := sitepkgstest.Artifact(t, blobs, name, files[name])
		ws = append(ws, sitepkgs.Wheel{File: a.File, Sha256: a.Sha256, Size: a.Size, Path: p})
	}
	return sitepkgs.Stage(context.Background(), ws, t.TempDir(), time.Unix(1, 0))
}

func twoWheels(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"alpha-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "alpha", "1.0", W{Name: "alpha/__init__.py", Body: "A = 1\n"}, W{Name: "ns/__init__.py", Body: "# namespace\n"}),
		"beta-2.0-py3-none-any.whl":  sitepkgstest.Wheel(t, "beta", "2.0", W{Name: "beta/__init__.py", Body: "B = 2\n"}, W{Name: "beta/_x.so", Body: "\x7fELF", Mode: 0o755}, W{Name: "ns/__init__.py", Body: "# namespace\n"}),
	}
}

func TestStageMerges(t *testing.T) {
	tree, err := stage(t, twoWheels(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tree.Entries {
		got = append(got, fmt.Sprintf("%s %o %s", e.Path, e.Mode, e.Wheel))
	}
	want := []string{
		"alpha-1.0.dist-info/INSTALLER 644 alpha-1.0-py3-none-any.whl",
		"alpha-1.0.dist-info/METADATA 644 alpha-1.0-py3-none-any.whl",
		"alpha-1.0.dist-info/RECORD 644 alpha-1.0-py3-none-any.whl",
		"alpha-1.0.dist-info/WHEEL 644 alpha-1.0-py3-none-any.whl",
		"alpha/__init__.py 644 alpha-1.0-py3-none-any.whl",
		"beta-2.0.dist-info/INSTALLER 644 beta-2.0-py3-none-any.whl",
		"beta-2.0.dist-info/METADATA 644 beta-2.0-py3-none-any.whl",
		"beta-2.0.dist-info/RECORD 644 beta-2.0-py3-none-any.whl",
		"beta-2.0.dist-info/WHEEL 644 beta-2.0-py3-none-any.whl",
		"beta/__init__.py 644 beta-2.0-py3-none-any.whl",
		"beta/_x.so 755 beta-2.0-py3-none-any.whl",
		"ns/__init__.py 644 alpha-1.0-py3-none-any.whl", // the same bytes in both: kept once
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"alpha", "alpha-1.0.dist-info", "beta", "beta-2.0.dist-info", "ns"}, tree.Dirs()); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
}

func TestStageConflicts(t *testing.T) {
	for name, second := range map[string][]byte{
		"same path":      sitepkgstest.Wheel(t, "beta", "2.0", W{Name: "alpha/__init__.py", Body: "B = 2\n"}),
		"file over dir":  sitepkgstest.Wheel(t, "beta", "2.0", W{Name: "alpha", Body: "B = 2\n"}),
		"dir under file": sitepkgstest.Wheel(t, "beta", "2.0", W{Name: "alpha/__init__.py/x", Body: "B\n"}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := stage(t, map[string][]byte{
				"alpha-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "alpha", "1.0", W{Name: "alpha/__init__.py", Body: "A = 1\n"}),
				"beta-2.0-py3-none-any.whl":  second,
			})
			if !errors.Is(err, sitepkgs.ErrConflict) || !errors.Is(err, errdefs.Invalid) {
				t.Fatalf("err = %v, want ErrConflict (Invalid)", err)
			}
			for _, w := range []string{"alpha-1.0-py3-none-any.whl", "beta-2.0-py3-none-any.whl"} {
				if !bytes.Contains([]byte(err.Error()), []byte(w)) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestStageRefuses(t *testing.T) {
	ctx := context.Background()
	blobs := t.TempDir()
	good := sitepkgstest.Wheel(t, "alpha", "1.0", W{Name: "alpha/__init__.py", Body: "A = 1\n"})
	a, p := sitepkgstest.Artifact(t, blobs, "alpha-1.0-py3-none-any.whl", good)
	evil := sitepkgstest.Wheel(t, "evil", "1.0", W{Name: "../escape.py", Body: "x\n"})
	ea, ep := sitepkgstest.Artifact(t, blobs, "evil-1.0-py3-none-any.whl", evil)
	for _, tc := range []struct {
		name string
		w    sitepkgs.Wheel
		is   error
	}{
		{"sha256", sitepkgs.Wheel{File: a.File, Sha256: ea.Sha256, Size: a.Size, Path: p}, lock.ErrCorruptBlob},
		{"size", sitepkgs.Wheel{File: a.File, Sha256: a.Sha256, Size: a.Size + 1, Path: p}, lock.ErrCorruptBlob},
		{"escape", sitepkgs.Wheel{File: ea.File, Sha256: ea.Sha256, Size: ea.Size, Path: ep}, safepath.ErrUnsafe},
		{"name", sitepkgs.Wheel{File: "../alpha-1.0-py3-none-any.whl", Sha256: a.Sha256, Size: a.Size, Path: p}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			staging := t.TempDir()
			_, err := sitepkgs.Stage(ctx, []sitepkgs.Wheel{tc.w}, staging, time.Unix(1, 0))
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if ents, _ := os.ReadDir(staging); len(ents) != 0 {
				t.Errorf("staging holds %d entries after a refusal", len(ents))
			}
		})
	}
}

func TestArchiveDeterministic(t *testing.T) {
	var sums []string
	var last []byte
	for range 2 {
		tree, err := stage(t, twoWheels(t))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tree.WriteArchive(context.Background(), &buf, time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(buf.Bytes())
		sums = append(sums, hex.EncodeToString(s[:]))
		last = buf.Bytes()
	}
	if sums[0] != sums[1] {
		t.Fatalf("two archives of the same wheels differ: %s, %s", sums[0], sums[1])
	}
	zr, err := gzip.NewReader(bytes.NewReader(last))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q mtime %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.ModTime.Unix() != 1700000000 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: mtime %v uid %d gid %d uname %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		got = append(got, fmt.Sprintf("%s %o", h.Name, h.Mode))
	}
	want := []string{
		// Sorted by path, a directory by its name without the slash:
		// every directory still comes before what it holds.
		"alpha/ 755",
		"alpha-1.0.dist-info/ 755", "alpha-1.0.dist-info/INSTALLER 644", "alpha-1.0.dist-info/METADATA 644", "alpha-1.0.dist-info/RECORD 644", "alpha-1.0.dist-info/WHEEL 644",
		"alpha/__init__.py 644",
		"beta/ 755",
		"beta-2.0.dist-info/ 755", "beta-2.0.dist-info/INSTALLER 644", "beta-2.0.dist-info/METADATA 644", "beta-2.0.dist-info/RECORD 644", "beta-2.0.dist-info/WHEEL 644",
		"beta/__init__.py 644", "beta/_x.so 755",
		"ns/ 755", "ns/__init__.py 644",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive entries (-want +got):\n%s", diff)
	}
}

// TestStageOpenErrors: a wheel whose file is missing is errdefs.NotFound;
// one that is there but cannot be opened (a symlink loop, ELOOP, which
// root cannot read either) is errdefs.CantWrite, as an unreadable cache
// blob is.
func TestStageOpenErrors(t *testing.T) {
	blobs := t.TempDir()
	a, p := sitepkgstest.Artifact(t, blobs, "alpha-1.0-py3-none-any.whl", sitepkgstest.Wheel(t, "alpha", "1.0", W{Name: "alpha/__init__.py", Body: "A = 1\n"}))
	loop := filepath.Join(blobs, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		kind       errdefs.Kind
	}{
		{"missing", p + ".gone", errdefs.NotFound},
		{"unreadable", loop, errdefs.CantWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := sitepkgs.Wheel{File: a.File, Sha256: a.Sha256, Size: a.Size, Path: tc.path}
			_, err := sitepkgs.Stage(context.Background(), []sitepkgs.Wheel{w}, t.TempDir(), time.Unix(1, 0))
			if errdefs.KindOf(err) != tc.kind {
				t.Errorf("err = %v (kind %v), want kind %v", err, errdefs.KindOf(err), tc.kind)
			}
		})
	}
}
