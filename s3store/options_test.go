package s3store

import (
	"context"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error, of each option type, stops
// Open, Bake and GC before any request.
func TestOptionErrorStops(t *testing.T) {
	ctx := context.Background()
	s := &Store{}
	tests := []struct {
		name string
		run  func(*testing.T)
	}{
		{"Open", func(t *testing.T) {
			optiontest.Stops(t, func(opts ...Option) error {
				_, err := Open(ctx, "s3://bucket/prefix", opts...)
				return err
			})
		}},
		{"Bake", func(t *testing.T) {
			optiontest.Stops(t, func(opts ...BakeOption) error {
				_, err := s.Bake(ctx, nil, nil, append([]BakeOption{WithVerify(true)}, opts...)...)
				return err
			})
		}},
		{"GC", func(t *testing.T) {
			optiontest.Stops(t, func(opts ...GCOption) error {
				_, err := s.GC(ctx, nil, append([]GCOption{WithDryRun(true)}, opts...)...)
				return err
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
