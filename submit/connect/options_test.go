package connect

import (
	"context"
	"errors"
	"testing"
)

// TestOptionErrorStops checks that Push returns an option's error before
// it dials.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	tests := []struct {
		name string
		opts []Option
	}{
		{"alone", []Option{func(*options) error { return errOpt }}},
		{"after others", []Option{WithRetries(1, 0), WithCallTimeout(0), func(*options) error { return errOpt }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Push(context.Background(), &Remote{Host: "127.0.0.1", Port: 1}, nil, tt.opts...)
			if !errors.Is(err, errOpt) {
				t.Errorf("err = %v, want the option's error", err)
			}
		})
	}
}
