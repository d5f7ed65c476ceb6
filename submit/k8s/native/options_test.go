package native

import (
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error stops Build.
func TestOptionErrorStops(t *testing.T) {
	optiontest.Stops(t, func(opts ...Option) error {
		_, err := Build(testInput(ResourceJava, nil), append([]Option{WithRand(zeros{}), WithAppID("appId")}, opts...)...)
		return err
	})
}
