package connect

import (
	"context"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error stops Push before it dials.
func TestOptionErrorStops(t *testing.T) {
	optiontest.Stops(t, func(opts ...Option) error {
		_, err := Push(context.Background(), &Remote{Host: "127.0.0.1", Port: 1}, nil, append([]Option{WithRetries(1, 0), WithCallTimeout(0)}, opts...)...)
		return err
	})
}
