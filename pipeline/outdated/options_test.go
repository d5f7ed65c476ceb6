package outdated

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestOptionErrorStops: an option's error stops Run before it reads the
// lock (here a missing one), and the options after it are not applied.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option")
	fail := func(*options) error { return errOpt }
	tests := []struct {
		name   string
		before []Option
	}{
		{"first", nil},
		{"after a valid one", []Option{WithLogger(nil)}},
	}
	missing := filepath.Join(t.TempDir(), "prebake.lock")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applied := false
			later := func(*options) error { applied = true; return nil }
			_, err := Run(context.Background(), Input{LockPath: missing, Latest: true}, append(tt.before, fail, later)...)
			if !errors.Is(err, errOpt) {
				t.Errorf("Run: %v, want the option's error", err)
			}
			if applied {
				t.Error("an option after the failing one was applied")
			}
		})
	}
}
