package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// TestFindWithWheels: a store's set and an image hold wheels too, so a
// lock with wheels is looked up, not refused: a store without its set is
// ErrNotHeld (resolve and upload it), a missing image NotFound.
func TestFindWithWheels(t *testing.T) {
	py, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&StoreTarget{URL: "file:///nonexistent"}).Find(context.Background(), py)
	if !errors.Is(err, ErrNotHeld) || errors.Is(err, lock.ErrUnsupportedKind) {
		t.Errorf("store: %v, want ErrNotHeld", err)
	}
	_, err = (&ImageFrom{Ref: "oci:/nonexistent"}).Find(context.Background(), py)
	if errors.Is(err, lock.ErrUnsupportedKind) || !errors.Is(err, errdefs.NotFound) {
		t.Errorf("image: %v, want not found", err)
	}
}
