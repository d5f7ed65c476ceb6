package sitepkgs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/internal/wheel"
)

// TestStreamingIsStage: a streaming tree has the staged tree's entries
// (paths, modes, sizes, digests, wheels; no staged file) and writes the
// same archive, byte for byte, with nothing written to staging.
func TestStreamingIsStage(t *testing.T) {
	ctx := context.Background()
	blobs := t.TempDir()
	files := twoWheels(t)
	var ws []sitepkgs.Wheel
	for _, name := range slices.Sorted(maps.Keys(files)) {
		a, p := sitepkgstest.Artifact(t, blobs, name, files[name])
		ws = append(ws, sitepkgs.Wheel{File: a.File, Sha256: a.Sha256, Size: a.Size, Path: p})
	}
	staged, err := sitepkgs.Stage(ctx, ws, t.TempDir(), time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	staging := t.TempDir()
	streamed, err := sitepkgs.Stage(ctx, ws, staging, time.Unix(1, 0), sitepkgs.Streaming())
	if err != nil {
		t.Fatal(err)
	}
	defer streamed.Close()
	if d := cmp.Diff(staged, streamed, cmpopts.IgnoreFields(sitepkgs.Entry{}, "Src"), cmpopts.IgnoreUnexported(sitepkgs.Tree{}, sitepkgs.Entry{})); d != "" {
		t.Errorf("entries (-staged +streamed):\n%s", d)
	}
	for _, e := range streamed.Entries {
		if e.Src != "" {
			t.Errorf("%s: staged at %s", e.Path, e.Src)
		}
	}
	if n := countFiles(t, staging); n != 0 {
		t.Errorf("streaming wrote %d files to staging", n)
	}
	var a, b bytes.Buffer
	if err := staged.WriteArchive(ctx, &a, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := streamed.WriteArchive(ctx, &b, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the streaming tree's archive differs from the staged tree's")
	}
}

// TestStreamingRefusesLyingMember: a member whose bytes are not its
// RECORD's passes staging (nothing is read yet) but fails the write that
// reads it, as errdefs.Invalid naming the member.
func TestStreamingRefusesLyingMember(t *testing.T) {
	ctx := context.Background()
	// RECORD says "A = 1\n"; the member holds "A = 2\n" (same size).
	di := "alpha-1.0.dist-info"
	meta, whl := "Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\n", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	rec := recordRow("alpha/__init__.py", "A = 1\n") + recordRow(di+"/METADATA", meta) + recordRow(di+"/WHEEL", whl) + di + "/RECORD,,\n"
	evil := sitepkgstest.Zip(t, W{Name: "alpha/__init__.py", Body: "A = 2\n"}, W{Name: di + "/METADATA", Body: meta}, W{Name: di + "/WHEEL", Body: whl}, W{Name: di + "/RECORD", Body: rec})
	a, p := sitepkgstest.Artifact(t, t.TempDir(), "alpha-1.0-py3-none-any.whl", evil)
	tree, err := sitepkgs.Stage(ctx, []sitepkgs.Wheel{{File: a.File, Sha256: a.Sha256, Size: a.Size, Path: p}}, t.TempDir(), time.Unix(1, 0), sitepkgs.Streaming())
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	err = tree.WriteArchive(ctx, &bytes.Buffer{}, time.Unix(1, 0))
	if !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), "alpha/__init__.py") {
		t.Fatalf("archive of a lying member: %v", err)
	}
	if !errors.Is(err, wheel.ErrRecord) {
		t.Errorf("error %v is not wheel.ErrRecord", err)
	}
}

// recordRow is a RECORD line of a member.
func recordRow(name, body string) string {
	s := sha256.Sum256([]byte(body))
	return fmt.Sprintf("%s,sha256=%s,%d\n", name, base64.RawURLEncoding.EncodeToString(s[:]), len(body))
}

// countFiles counts the regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
