package cache

import (
	"os"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error stops Open before it creates
// anything.
func TestOptionErrorStops(t *testing.T) {
	dir := t.TempDir()
	optiontest.Stops(t, func(opts ...Option) error {
		_, err := Open(dir, false, nil, append([]Option{WithLockWait(time.Second, time.Minute)}, opts...)...)
		return err
	})
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("Open made %v (%v), want nothing", ents, err)
	}
}
