package sbom

import (
	"errors"
	"testing"

	"github.com/prebake/prebake/lock"
)

// TestOptionErrorStops checks that New returns an option's error.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	bad := func(*options) error { return errOpt }
	tests := []struct {
		name string
		opts []Option
	}{
		{"alone", []Option{bad}},
		{"after others", []Option{WithToolVersion("v0.0.0-test"), bad}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(&lock.File{}, tt.opts...); !errors.Is(err, errOpt) {
				t.Errorf("err = %v, want the option's error", err)
			}
		})
	}
}
