package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

// TestSourceRefusesEscapes: the source refuses hostile parts whoever asks
// (speculation calls it without the loader), and a relative path that
// would leave a file:// repository's root (finding 1f).
func TestSourceRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "ARTPWN-1.pom"), []byte("<project/>"), 0o644)
	repo := m2test.New(t)
	repo.Module("g", "a", "1")
	s := testSource(t, []string{"file://" + repo.Dir + "/"}, ChecksumIgnore)
	ctx := context.Background()
	rel, _ := filepath.Rel(repo.Dir, outside)
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
