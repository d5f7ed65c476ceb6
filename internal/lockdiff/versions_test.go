package lockdiff

import (
	"testing"

	"github.com/prebake/prebake/lock"
)

// wheelArt is a wheel: its versions compare as PEP 440 (internal/pep440).
var wheelArt = lock.Artifact{Kind: lock.KindWheel}

func TestCompareWheelVersions(t *testing.T) {
	// Each version sorts before the next (PEP 440's own examples, plus
	// epochs and local labels).
	order := []string{"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2", "1.0b2.post345.dev456",
		"1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0+9", "1.0+10", "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1", "2.0", "10.0", "1!0.1"}
	for i := range order {
		for j := range order {
			got := compareVersions(wheelArt, order[i], order[j])
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got != want {
				t.Errorf("compareVersions(wheelArt, %q, %q) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	if c := compareVersions(wheelArt, "1.0", "1.0.0"); c != 0 {
		t.Errorf("1.0 vs 1.0.0 = %d, want 0 (trailing zeros)", c)
	}
}
