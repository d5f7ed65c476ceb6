package resolver

import (
	"context"
	"testing"

	"github.com/prebake/prebake/resolver/repo"
)

// newFSSource is the real Source (as Resolve builds it) over file://
// Maven-layout directories alone, tried in order: no default
// repositories, offline, checksums ignored, with its cache in a temp dir
// of t.
func newFSSource(t testing.TB, urls []string) (*repo.Source, error) {
	return repo.NewSource(context.Background(), repo.Config{Repositories: urls, NoDefaultRepositories: true, Offline: true, CacheDir: t.TempDir(), ChecksumPolicy: ChecksumIgnore})
}
