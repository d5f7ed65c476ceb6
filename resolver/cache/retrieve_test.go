package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prebake/prebake/lock"
)

// A reused retrieve directory is dated now (audit 4, L3): cache prune
// --max-size keeps it for its grace, counted from the last Retrieve that
// handed out its paths, not from the one that made it.
func TestRetrieveTouchesReusedDir(t *testing.T) {
	ctx := context.Background()
	cacheDir := t.TempDir()
	jar := []byte("PK\x03\x04 a jar")
	sum := sha256.Sum256(jar)
	sha := hex.EncodeToString(sum[:])
	blob := BlobPath(cacheDir, sha)
	if err := os.MkdirAll(filepath.Dir(blob), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, jar, 0o644); err != nil {
		t.Fatal(err)
	}
	l := &lock.File{Version: 1, Artifacts: []lock.Artifact{{
		Coord: "g:a:1", File: "g_a-1.jar", Repository: "https://repo.example/", Sha256: sha, Size: int64(len(jar)),
	}}}
	dir, paths, err := Retrieve(ctx, l, cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	dir2, paths2, err := Retrieve(ctx, l, cacheDir)
	if err != nil || dir2 != dir || len(paths2) != 1 || paths2[0] != paths[0] {
		t.Fatalf("second Retrieve: %s %v %v (first: %s %v)", dir2, paths2, err, dir, paths)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if age := time.Since(fi.ModTime()); age > time.Minute {
		t.Errorf("reused retrieve directory is %v old, want dated now", age)
	}
}
