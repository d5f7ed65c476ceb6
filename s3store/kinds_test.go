package s3store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/s3store"
)

// TestBakeRefusesWheels: a set's manifest names jars only, so a lock with
// wheels is refused (65, lock.ErrUnsupportedKind) and nothing is written.
func TestBakeRefusesWheels(t *testing.T) {
	py, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := s3store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	called := false
	jars := func(context.Context) ([]string, error) { called = true; return nil, nil }
	_, err = st.Bake(context.Background(), py, jars)
	if !errors.Is(err, lock.ErrUnsupportedKind) || !errors.Is(err, errdefs.Invalid) {
		t.Fatalf("Bake: %v, want lock.ErrUnsupportedKind (invalid input)", err)
	}
	if called {
		t.Error("the jars were asked for")
	}
	for _, sub := range []string{"jars", "sets"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written: %v", sub, err)
		}
	}
}
