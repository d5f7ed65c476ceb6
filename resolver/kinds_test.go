package resolver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver/cache"
)

// TestLockWithWheels: the wheels and inputs.python are part of the set:
// a request that cannot carry them finds the lock stale (frozen: 78, even
// when only the repositories changed, which a jar-only lock survives by
// content), never rewrites it without them (65, lock.ErrUnsupportedKind),
// and the Maven fetch and the retrieve directory refuse it.
func TestLockWithWheels(t *testing.T) {
	ctx := context.Background()
	repo, req := demoLockRequest(t)
	res, err := Resolve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	mirror := filepath.Join(t.TempDir(), "mirror")
	if err := os.Symlink(repo, mirror); err != nil {
		t.Fatal(err)
	}
	moved := req
	moved.Repositories = []string{"file://" + mirror + "/"}
	moved.Frozen = true
	if got, err := Resolve(ctx, moved); err != nil || !got.FromLock {
		t.Fatalf("control: a jar-only lock, frozen, only the repositories changed: %v", err)
	}
	if in, _ := LockFor(ctx, moved); in == nil || in.Inputs.InputsHash != res.Lock.Inputs.InputsHash {
		t.Fatal("control: LockFor, frozen, only the repositories changed: no lock")
	}

	py, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	py.Inputs.Packages, py.Inputs.Repositories, py.Inputs.Excludes, py.Inputs.Conflict = res.Lock.Inputs.Packages, res.Lock.Inputs.Repositories, res.Lock.Inputs.Excludes, res.Lock.Inputs.Conflict
	py.Artifacts = append(res.Lock.Jars(), py.Wheels()...)
	if err := lock.Write(req.LockPath, py); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(req.LockPath)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := LockFor(ctx, req); !errors.Is(err, ErrStaleLock) || !strings.Contains(err.Error(), "python inputs changed") {
		t.Errorf("LockFor: %v, want ErrStaleLock naming the python inputs", err)
	}
	frozen := req
	frozen.Frozen = true
	for name, r := range map[string]Request{"frozen": frozen, "frozen, only the repositories changed": moved} {
		if _, err := Resolve(ctx, r); !errors.Is(err, errdefs.Stale) {
			t.Errorf("%s: %v, want a stale lock (78)", name, err)
		}
	}
	if _, err := Resolve(ctx, req); !errors.Is(err, lock.ErrUnsupportedKind) || !errors.Is(err, errdefs.Invalid) {
		t.Errorf("not frozen: %v, want lock.ErrUnsupportedKind (invalid input)", err)
	}
	if now, _ := os.ReadFile(req.LockPath); !bytes.Equal(now, written) {
		t.Errorf("the lock with wheels was rewritten:\n%s", now)
	}
	if _, err := FetchLocked(ctx, py, req); !errors.Is(err, lock.ErrUnsupportedKind) {
		t.Errorf("FetchLocked: %v, want lock.ErrUnsupportedKind", err)
	}
	if _, _, err := cache.Retrieve(ctx, py, req.CacheDir); !errors.Is(err, lock.ErrUnsupportedKind) {
		t.Errorf("Retrieve: %v, want lock.ErrUnsupportedKind", err)
	}
}

// demoLockRequest is a request for slf4j-api 2.0.7 from testdata's demo
// repository (its absolute path, returned too), with a lock and a cache
// in a temporary directory.
func demoLockRequest(t *testing.T) (repo string, req Request) {
	t.Helper()
	repo, err := filepath.Abs("../testdata/demo-repo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return repo, Request{
		Packages:              []string{"org.slf4j:slf4j-api:2.0.7"},
		Repositories:          []string{"file://" + repo + "/"},
		NoDefaultRepositories: true,
		Conflict:              ConflictLatest,
		LockPath:              filepath.Join(dir, "prebake.lock"),
		CacheDir:              filepath.Join(dir, "cache"),
	}
}
