package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/lock"
)

// TestOptionErrorStops: an option's error stops Export and Import before
// they read or write anything, and the options after it are not applied.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option")
	fail := func(*options) error { return errOpt }
	dir := t.TempDir()
	tar := filepath.Join(dir, "bundle.tar")
	tests := []struct {
		name string
		call func(opts ...Option) error
	}{
		{"export", func(opts ...Option) error {
			_, err := Export(context.Background(), &lock.File{}, nil, tar, opts...)
			return err
		}},
		{"import", func(opts ...Option) error {
			_, err := Import(context.Background(), tar, dir, opts...)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applied := false
			later := func(*options) error { applied = true; return nil }
			if err := tt.call(WithForce(true), fail, later); !errors.Is(err, errOpt) {
				t.Errorf("%s: %v, want the option's error", tt.name, err)
			}
			if applied {
				t.Error("an option after the failing one was applied")
			}
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("%s wrote %v (%v), want nothing", tt.name, ents, err)
			}
		})
	}
}
