package resolver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/lock"
)

// The layers behind the coordinate validator, each tested alone: were a
// hostile name to get past it, no derived path would leave its root.

func hostileLock(file, coord string, size int64) *lock.File {
	return &lock.File{Artifacts: []lock.Artifact{{Coord: coord, File: file, Sha256: strings.Repeat("ab", 32), Size: size, Repository: "file:///nowhere/"}}}
}

// TestLockConsumersRefuseHostileLocks: Retrieve, FetchLocked and WriteLock
// check a lock that did not come through ParseLock.
func TestLockConsumersRefuseHostileLocks(t *testing.T) {
	for _, l := range []*lock.File{
		hostileLock("../../../PWNED_art-1.jar", "g:a:1", 3),
		hostileLock("..", "g:a:1", 3),
		hostileLock("a\x00b.jar", "g:a:1", 3),
		hostileLock("g_a-1.jar", "../..:a:1", 3),
		hostileLock("g_a-1.jar", "g:a:1", -1),
	} {
		sandbox := t.TempDir()
		cache := filepath.Join(sandbox, "cache")
		if _, _, err := blobcache.Retrieve(context.Background(), l, cache); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("Retrieve %q: err = %v, want 65", l.Artifacts[0].File, err)
		}
		if _, err := FetchLocked(context.Background(), l, Request{CacheDir: cache}); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("FetchLocked %q: err = %v, want 65", l.Artifacts[0].File, err)
		}
		lockPath := filepath.Join(sandbox, "prebake.lock")
		if err := lock.Write(lockPath, l); errdefs.KindOf(err) != errdefs.Invalid || !errors.Is(err, lock.ErrBadLock) {
			t.Errorf("WriteLock %q: err = %v, want 65", l.Artifacts[0].File, err)
		}
		if ents, _ := os.ReadDir(sandbox); len(ents) != 0 {
			t.Errorf("%q: %d entries written", l.Artifacts[0].File, len(ents))
		}
	}
}
