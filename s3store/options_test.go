package s3store

import (
	"context"
	"errors"
	"testing"
)

// TestOptionErrorStops checks that Open, Bake and GC return an option's
// error before any request.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	ctx := context.Background()
	s := &Store{}
	tests := []struct {
		name string
		call func() error
	}{
		{"Open", func() error {
			_, err := Open(ctx, "s3://bucket/prefix", func(*options) error { return errOpt })
			return err
		}},
		{"Bake", func() error {
			_, err := s.Bake(ctx, nil, nil, WithVerify(true), func(*bakeOptions) error { return errOpt })
			return err
		}},
		{"GC", func() error {
			_, err := s.GC(ctx, nil, WithDryRun(true), func(*gcOptions) error { return errOpt })
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, errOpt) {
				t.Errorf("err = %v, want the option's error", err)
			}
		})
	}
}
