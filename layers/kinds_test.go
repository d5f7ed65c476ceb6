package layers

import (
	"errors"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// TestBakeRefusesWheelsInSharedSet: a shared set with wheels is refused
// (65, with lock.ErrUnsupportedKind) before anything is fetched: a shared
// layer holds jars only (a lock with wheels bakes: python_test.go).
func TestBakeRefusesWheelsInSharedSet(t *testing.T) {
	py, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	jars, err := lock.Read("../testdata/lockdiff/base.lock")
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]BakeInput{
		"shared set": {Lock: jars, Shared: py, Base: "oci:/nonexistent", Target: "oci:/nonexistent"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Bake(t.Context(), in, WithCacheDir(t.TempDir()))
			if !errors.Is(err, lock.ErrUnsupportedKind) || !errors.Is(err, errdefs.Invalid) {
				t.Errorf("Bake: %v, want lock.ErrUnsupportedKind (invalid input)", err)
			}
		})
	}
}
