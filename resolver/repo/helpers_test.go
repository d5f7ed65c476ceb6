package repo

import (
	"context"
	"testing"

	"github.com/prebake/prebake/lock"
)

// newSourceFor is NewSource with its options made (tests).
func newSourceFor(ctx context.Context, req Config, o *options) (*Source, error) {
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

// fetchLockedFor is resolver.FetchLocked over cfg's locked chain (tests).
func fetchLockedFor(ctx context.Context, lf *lock.File, cfg Config, opts ...Option) ([]string, error) {
	c, err := LockedChain(ctx, cfg, opts...)
	if err != nil {
		return nil, err
	}
	return c.FetchLocked(ctx, lf, cfg.CacheDir, c.Offline(), false)
}

// ivsDir holds the Ivy settings cases (the resolver's testdata, shared
// with its oracle test).
const ivsDir = "../testdata/ivysettings"
