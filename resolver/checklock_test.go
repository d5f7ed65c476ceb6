package resolver

import (
	"context"
	"errors"
	"os"
	"testing"
)

func TestLockFor(t *testing.T) {
	_, req := demoLockRequest(t)
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
