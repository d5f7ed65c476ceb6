package doctor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOptionErrorStops: an option's error stops Check before it probes
// anything, and the options after it are not applied.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option")
	fail := func(*options) error { return errOpt }
	tests := []struct {
		name   string
		before []Option
	}{
		{"first", nil},
		{"after a valid one", []Option{WithTimeout(time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applied := false
			later := func(*options) error { applied = true; return nil }
			_, err := Check(context.Background(), Input{}, append(tt.before, fail, later)...)
			if !errors.Is(err, errOpt) {
				t.Errorf("Check: %v, want the option's error", err)
			}
			if applied {
				t.Error("an option after the failing one was applied")
			}
		})
	}
}
