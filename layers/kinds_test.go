package layers

import (
	"errors"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// TestBakeRefusesWheels: a lock with wheels but no BakeInput.Wheels (a
// caller that does not ship wheels) and a shared set with wheels are
// refused (65, with lock.ErrUnsupportedKind) before anything is fetched:
// an image never holds wheels baked as jars, and a shared layer holds
// jars only (a lock with wheels and their files bakes: python_test.go).
func TestBakeRefusesWheels(t *testing.T) {
	py, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	jars, err := lock.Read("../testdata/lockdiff/base.lock")
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]BakeInput{
		"lock":       {Lock: py, Base: "oci:/nonexistent", Target: "oci:/nonexistent"},
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
