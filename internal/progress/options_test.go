package progress

import (
	"io"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
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

// TestOptionErrorStops: an option's error stops New, which returns no
// Reporter.
func TestOptionErrorStops(t *testing.T) {
	optiontest.Stops(t, func(opts ...Option) error {
		r, err := New(io.Discard, Normal, append([]Option{WithTerminal(false), WithWarnings(func(string) {})}, opts...)...)
		if r != nil {
			t.Errorf("New = %v with an option's error, want nil", r)
		}
		return err
	})
}
