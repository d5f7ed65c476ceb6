package s3store_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/s3store/s3test"
)

// TestGCKeepsUsedSets: a hit refreshes a set's age, so gc --older-than
// never deletes a set baked or hit within the window (issue 16); a set
// neither written nor hit in the window goes, with its use markers.
func TestGCKeepsUsedSets(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := s3store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	used, usedPaths := s3test.Fixture(t, t.TempDir(), 21, s3test.Jar{Name: "a", Size: 1 << 10})
	idle, idlePaths := s3test.Fixture(t, t.TempDir(), 22, s3test.Jar{Name: "b", Size: 1 << 10})
	if _, err := st.Bake(ctx, used, localJars(usedPaths)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Bake(ctx, idle, localJars(idlePaths)); err != nil {
		t.Fatal(err)
	}
	// Both sets were written 40 days ago, with an old use marker each.
	old := time.Now().Add(-40 * 24 * time.Hour)
	for _, h := range []string{used.Hash(), idle.Hash()} {
		set := filepath.Join(dir, "sets", h+".json")
		if err := os.Chtimes(set, old, old); err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(dir, "used", h, old.UTC().Format("2006-01-02"))
		os.MkdirAll(filepath.Dir(marker), 0o755)
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Today: one hit through bake, the other set idle.
	res, err := st.Bake(ctx, used, localJars(usedPaths))
	if err != nil || !res.Hit {
		t.Fatalf("hit: %v %+v", err, res)
	}
	// And a hit through SetURLs (what submit --store --lock does) counts too.
	if _, err := s3store.SetURLs(ctx, "file://"+dir, used.Hash(), s3store.StyleS3A); err != nil {
		t.Fatal(err)
	}
	cutoff := time.Now().Add(-30 * 24 * time.Hour)
	gc, err := st.GC(ctx, func(_ string, last time.Time) bool { return last.After(cutoff) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gc.DeletedSets, []string{idle.Hash()}) || gc.KeptSets != 1 {
		t.Errorf("gc: deleted %v, kept %d; want only the idle set deleted", gc.DeletedSets, gc.KeptSets)
	}
	if _, err := os.Stat(filepath.Join(dir, "used", idle.Hash())); err == nil {
		if entries, _ := os.ReadDir(filepath.Join(dir, "used", idle.Hash())); len(entries) > 0 {
			t.Errorf("the idle set's use markers stayed: %v", entries)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "used", used.Hash()))
	if len(entries) != 1 || entries[0].Name() != time.Now().UTC().Format("2006-01-02") {
		t.Errorf("the used set's markers: %v, want only today's", entries)
	}
}
