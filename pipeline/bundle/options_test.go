package bundle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
	"github.com/prebake/prebake/lock"
)

// TestOptionErrorStops: an option's error stops Export and Import before
// they read or write anything.
func TestOptionErrorStops(t *testing.T) {
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
			optiontest.Stops(t, func(opts ...Option) error { return tt.call(append([]Option{WithForce(true)}, opts...)...) })
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("%s wrote %v (%v), want nothing", tt.name, ents, err)
			}
		})
	}
}
