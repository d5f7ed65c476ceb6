package sitepkgs

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// TestOptionErrorStops checks that Stage returns an option's error and
// leaves nothing under staging.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	bad := func(*stageOptions) error { return errOpt }
	tests := []struct {
		name string
		opts []StageOption
	}{
		{"alone", []StageOption{bad}},
		{"after others", []StageOption{Streaming(), bad}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			staging := t.TempDir()
			if _, err := Stage(context.Background(), []Wheel{{}}, staging, time.Unix(1, 0), tt.opts...); !errors.Is(err, errOpt) {
				t.Errorf("err = %v, want the option's error", err)
			}
			if ents, err := os.ReadDir(staging); err != nil || len(ents) != 0 {
				t.Errorf("staging after the error: %v, %v; want empty", ents, err)
			}
		})
	}
}
