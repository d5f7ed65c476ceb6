package resolver

import (
	"context"
	"testing"
)

// newFSSource is the real Source (newSource, as Resolve builds it) over
// file:// Maven-layout directories alone, tried in order: no default
// repositories, offline, checksums ignored, with its cache in a temp dir
// of t.
func newFSSource(t testing.TB, urls []string) (*source, error) {
	o, err := makeOptions(nil)
	if err != nil {
		return nil, err
	}
	return newSource(context.Background(), Request{Repositories: urls, NoDefaultRepositories: true, Offline: true, CacheDir: t.TempDir(), ChecksumPolicy: ChecksumIgnore}, o)
}
