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
	return newSourceFor(context.Background(), Request{Repositories: urls, NoDefaultRepositories: true, Offline: true, CacheDir: t.TempDir(), ChecksumPolicy: ChecksumIgnore}, o)
}

// newSourceFor is NewSource with its options made (tests).
func newSourceFor(ctx context.Context, req Request, o *options) (*source, error) {
	chain, _, err := chainFor(ctx, req, o)
	if err != nil {
		return nil, err
	}
	return newSource(req, chain, o)
}

// defaultOptions are the options with no Option given (tests).
func defaultOptions(t testing.TB) *options {
	t.Helper()
	o, err := makeOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
