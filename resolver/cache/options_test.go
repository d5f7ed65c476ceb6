package cache

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestOptionErrorStops: an option's error stops Open before it creates
// anything, and the options after it are not applied.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option")
	fail := func(*options) error { return errOpt }
	tests := []struct {
		name   string
		before []Option
	}{
		{"first", nil},
		{"after a valid one", []Option{WithLockWait(time.Second, time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			applied := false
			later := func(*options) error { applied = true; return nil }
			if _, err := Open(dir, false, nil, append(tt.before, fail, later)...); !errors.Is(err, errOpt) {
				t.Errorf("Open: %v, want the option's error", err)
			}
			if applied {
				t.Error("an option after the failing one was applied")
			}
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("Open made %v (%v), want nothing", ents, err)
			}
		})
	}
}
