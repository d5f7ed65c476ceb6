package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// TestFindRefusesWheels: a store's set and an image's jars are jars only,
// so a lock with wheels is refused (65, lock.ErrUnsupportedKind) before
// the store or the image is asked.
func TestFindRefusesWheels(t *testing.T) {
	py, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]SetFinder{
		"store": &StoreTarget{URL: "file:///nonexistent"},
		"image": &ImageFrom{Ref: "oci:/nonexistent"},
	} {
		if _, err := f.Find(context.Background(), py); !errors.Is(err, lock.ErrUnsupportedKind) || !errors.Is(err, errdefs.Invalid) {
			t.Errorf("%s: %v, want lock.ErrUnsupportedKind (invalid input)", name, err)
		}
	}
}
