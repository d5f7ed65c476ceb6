package resolver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestLockFor(t *testing.T) {
	repo, err := filepath.Abs("../testdata/demo-repo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	req := Request{
		Packages:              []string{"org.slf4j:slf4j-api:2.0.7"},
		Repositories:          []string{"file://" + repo + "/"},
		NoDefaultRepositories: true,
		Conflict:              ConflictLatest,
		LockPath:              filepath.Join(dir, "prebake.lock"),
		CacheDir:              filepath.Join(dir, "cache"),
	}
	if _, err := LockFor(context.Background(), req); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no lock yet: got %v, want os.ErrNotExist", err)
	}
	res, err := Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// With the cache gone, LockFor still answers: it needs no jar.
	if err := os.RemoveAll(req.CacheDir); err != nil {
		t.Fatal(err)
	}
	lock, err := LockFor(context.Background(), req)
	if err != nil {
		t.Fatalf("matching lock: %v", err)
	}
	if lock.Hash() != res.Lock.Hash() {
		t.Errorf("lock hash %s, want %s", lock.Hash(), res.Lock.Hash())
	}
	if _, err := os.Stat(req.CacheDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LockFor touched the cache: %v", err)
	}
	req.Packages = []string{"org.slf4j:slf4j-api:1.7.36"}
	if _, err := LockFor(context.Background(), req); !errors.Is(err, ErrStaleLock) {
		t.Errorf("changed packages: got %v, want ErrStaleLock", err)
	}
}
