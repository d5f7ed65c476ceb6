//go:build unix

package cache_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
)

// In the user's own cache, a tmp that another user's symbolic link
// replaced is refused (downloads fail with errdefs.CantWrite naming it) and
// never swept; an index entry another user wrote is not trusted.
func TestForeignEntriesInOwnCache(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to create files owned by another uid")
	}
	dir := t.TempDir()
	victimDir := t.TempDir()
	old := filepath.Join(victimDir, "report.txt")
	os.WriteFile(old, []byte("precious"), 0o644)
	then := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, then, then)
	if err := os.Symlink(victimDir, filepath.Join(dir, "tmp")); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(dir, "tmp"), 65534, 65534)
	c, err := blobcache.Open(dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the sweep followed the link: %v", err)
	}
	_, err = c.NewTemp()
	if !errors.Is(err, errdefs.CantWrite) || !strings.Contains(err.Error(), "a symbolic link owned by uid 65534") {
		t.Errorf("newTemp with a foreign tmp link: %v, want CantWrite naming the link's owner", err)
	}

	// The index: an entry of ours is read, the same entry owned by
	// another user is not.
	os.Remove(filepath.Join(dir, "tmp"))
	if c, err = blobcache.Open(dir, false, nil); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "a.jar")
	os.WriteFile(src, []byte("jar bytes"), 0o644)
	s, _, err := c.PutFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://repo.example/g/a/1/a-1.jar"
	if err := c.Record(u, blobcache.IndexEntry{Sha256: s.SHA256, Size: s.Size}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup(u); !ok {
		t.Fatal("our own index entry is not found")
	}
	if err := os.Chown(c.IndexPath(u), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if e, ok := c.Lookup(u); ok {
		t.Errorf("an index entry owned by another user was trusted: %+v", e)
	}
}
