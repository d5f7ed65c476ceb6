package outdated

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error stops Run before it reads the
// lock (here a missing one).
func TestOptionErrorStops(t *testing.T) {
	in := Input{LockPath: filepath.Join(t.TempDir(), "prebake.lock"), Latest: true}
	optiontest.Stops(t, func(opts ...Option) error {
		_, err := Run(context.Background(), in, append([]Option{WithLogger(nil)}, opts...)...)
		return err
	})
}
