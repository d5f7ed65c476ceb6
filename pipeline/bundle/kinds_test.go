package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/lock"
)

// TestExportRefusesWheels: a lock with a Python half is not exported as if
// its wheels were jars (issue 44: bundles carry jars only, for now).
func TestExportRefusesWheels(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "lockdiff", "python.lock"))
	if err != nil {
		t.Fatal(err)
	}
	lf, err := lock.Parse("python.lock", data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Export(context.Background(), lf, nil, filepath.Join(t.TempDir(), "b.tar"))
	if !errors.Is(err, lock.ErrUnsupportedKind) {
		t.Fatalf("Export of a lock with wheels: %v, want lock.ErrUnsupportedKind", err)
	}
}
