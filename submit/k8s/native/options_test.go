package native

import (
	"errors"
	"testing"
)

// TestOptionErrorStops checks that Build returns an option's error.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	bad := func(*options) error { return errOpt }
	tests := []struct {
		name string
		opts []Option
	}{
		{"alone", []Option{bad}},
		{"after others", []Option{WithRand(zeros{}), WithAppID("appId"), bad}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Build(testInput(ResourceJava, nil), tt.opts...); !errors.Is(err, errOpt) {
				t.Errorf("err = %v, want the option's error", err)
			}
		})
	}
}
