package progress

import (
	"errors"
	"io"
	"testing"
)

// newTest is New for tests: an option's error fails t.
func newTest(t testing.TB, w io.Writer, level Level, opts ...Option) *Reporter {
	t.Helper()
	r, err := New(w, level, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOptionErrorStops checks that New returns an option's error.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	bad := func(*options) error { return errOpt }
	tests := []struct {
		name string
		opts []Option
	}{
		{"alone", []Option{bad}},
		{"after others", []Option{WithTerminal(false), WithWarnings(func(string) {}), bad}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := New(io.Discard, Normal, tt.opts...); !errors.Is(err, errOpt) || r != nil {
				t.Errorf("New = %v, %v; want nil and the option's error", r, err)
			}
		})
	}
}
