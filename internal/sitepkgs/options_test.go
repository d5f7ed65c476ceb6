package sitepkgs

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error stops Stage before it writes
// anything under staging.
func TestOptionErrorStops(t *testing.T) {
	staging := t.TempDir()
	optiontest.Stops(t, func(opts ...StageOption) error {
		_, err := Stage(context.Background(), []Wheel{{}}, staging, time.Unix(1, 0), append([]StageOption{Streaming()}, opts...)...)
		return err
	})
	if ents, err := os.ReadDir(staging); err != nil || len(ents) != 0 {
		t.Errorf("staging after the error: %v, %v; want empty", ents, err)
	}
}
