package sbom

import (
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
	"github.com/prebake/prebake/lock"
)

// TestOptionErrorStops: an option's error stops New.
func TestOptionErrorStops(t *testing.T) {
	optiontest.Stops(t, func(opts ...Option) error {
		_, err := New(&lock.File{}, append([]Option{WithToolVersion("v0.0.0-test")}, opts...)...)
		return err
	})
}
