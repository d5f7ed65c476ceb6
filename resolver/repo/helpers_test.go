package repo

import (
	"context"
	"testing"

	"github.com/prebake/prebake/internal/m2test"
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

// testRepo writes Maven-layout files into a temp dir (m2test.Repo).
type testRepo struct {
	*m2test.Repo
	dir string
}

func newTestRepo(t testing.TB) *testRepo {
	r := m2test.New(t)
	return &testRepo{Repo: r, dir: r.Dir}
}

func (r *testRepo) put(rel string, data []byte, sums ...string) { r.Put(rel, data, sums...) }

// module writes g:a:v's POM and jar with .sha1 files.
func (r *testRepo) module(g, a, v string) { r.Module(g, a, v) }

func sha256hex(b []byte) string { return m2test.Sha256Hex(b) }

// logBuf is a Logger that records lines.
type logBuf = m2test.LogBuf

// ivsDir holds the Ivy settings cases (the resolver's testdata, shared
// with its oracle test).
const ivsDir = "../testdata/ivysettings"
