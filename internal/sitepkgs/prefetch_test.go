package sitepkgs_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
)

// TestPrefetch: entries read through a Prefetcher, in order, are their
// own bytes, whatever the bound (smaller than some entries: those are
// opened directly) and the workers; a Prefetcher closed before any Open, or
// half-way, stops.
func TestPrefetch(t *testing.T) {
	ctx := context.Background()
	var files []W
	for i := range 40 {
		files = append(files, W{Name: fmt.Sprintf("big/m%02d.py", i), Body: strings.Repeat(fmt.Sprint(i), 10*i+1)})
	}
	wheels := map[string][]byte{"big-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "big", "1.0", files...)}
	blobs := t.TempDir()
	var ws []sitepkgs.Wheel
	for _, name := range slices.Sorted(maps.Keys(wheels)) {
		a, p := sitepkgstest.Artifact(t, blobs, name, wheels[name])
		ws = append(ws, sitepkgs.Wheel{File: a.File, Sha256: a.Sha256, Size: a.Size, Path: p})
	}
	tree, err := sitepkgs.Stage(ctx, ws, t.TempDir(), time.Unix(1, 0), sitepkgs.Streaming())
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	read := func(open func() (io.ReadCloser, error)) string {
		t.Helper()
		rc, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		workers int
		budget  int64
	}{{1, 1 << 20}, {2, 100}, {4, 1}, {3, 0}} {
		pf := tree.Prefetch(ctx, c.workers, c.budget)
		for i, e := range tree.Entries {
			if got, want := read(func() (io.ReadCloser, error) { return pf.Open(i) }), read(e.Open); got != want {
				t.Fatalf("workers %d budget %d: %s: %q, want %q", c.workers, c.budget, e.Path, got, want)
			}
		}
		pf.Close()
	}
	tree.Prefetch(ctx, 2, 10).Close()
	pf := tree.Prefetch(ctx, 2, 10)
	read(func() (io.ReadCloser, error) { return pf.Open(0) })
	pf.Close()
}
