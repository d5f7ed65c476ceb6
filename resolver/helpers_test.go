package resolver

import (
	"testing"
	"time"

	"github.com/prebake/prebake/internal/m2test"
)

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

// fastOpts are options for tests: short backoff and timeouts.
func fastOpts(extra ...Option) []Option {
	return append([]Option{WithRetry(3, 10*time.Millisecond), WithIdleTimeout(2 * time.Second)}, extra...)
}
