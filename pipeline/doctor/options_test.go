package doctor

import (
	"context"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error stops Check before it probes
// anything.
func TestOptionErrorStops(t *testing.T) {
	optiontest.Stops(t, func(opts ...Option) error {
		_, err := Check(context.Background(), Input{}, append([]Option{WithTimeout(time.Second)}, opts...)...)
		return err
	})
}
