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

	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

// The layers behind the coordinate validator, each tested alone: were a
// hostile name to get past it, no derived path would leave its root.

// TestSourceRefusesEscapes: the source refuses hostile parts whoever asks
// (speculation calls it without the loader), and a relative path that
// would leave a file:// repository's root (finding 1f).
func TestSourceRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "ARTPWN-1.pom"), []byte("<project/>"), 0o644)
	repo := newTestRepo(t)
	repo.module("g", "a", "1")
	s := testSource(t, []string{"file://" + repo.dir + "/"}, ChecksumIgnore)
	ctx := context.Background()
	rel, _ := filepath.Rel(repo.dir, outside)
	for name, call := range map[string]func() error{
		"POM groupId":    func() error { _, err := s.POM(ctx, "../../x", "a", "1"); return err },
		"POM artifactId": func() error { _, err := s.POM(ctx, "g", "x/"+rel+"/ARTPWN", "1"); return err },
		"Artifact classif": func() error {
			_, err := s.Artifact(ctx, ArtifactRef{Group: "g", Artifact: "a", Version: "1", Classifier: "../x", Repo: s.chain[0].Repository})
			return err
		},
		"Versions":   func() error { _, err := s.Versions(ctx, "g", "a\x00"); return err },
		"fetch ..":   func() error { _, err := s.fetch(ctx, asker{}, s.chain[0], "g/a/1/"+rel+"/ARTPWN-1.pom"); return err },
		"listing ..": func() error { _, err := s.listing(ctx, s.chain[0], "../"); return err },
	} {
		err := call()
		if errdefs.KindOf(err) != errdefs.Invalid || !(errors.Is(err, maven.ErrInvalidCoordinate) || errors.Is(err, safepath.ErrUnsafe)) {
			t.Errorf("%s: err = %v (exit %d), want 65", name, err, errdefs.KindOf(err))
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(s.cache.Dir, "blobs", "sha256")); len(ents) != 0 {
		t.Errorf("%d blobs copied into the cache", len(ents))
	}
}

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
