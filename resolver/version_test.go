package resolver

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/prebake/prebake/internal/revision"

	"github.com/google/go-cmp/cmp"
)

// The order asserted by Ivy's own LatestRevisionStrategyTest.testSort
// (Ivy 2.5.1), which the oracle runs.
var ivySorted = []string{"0.2a", "0.2_b", "0.2rc1", "0.2-final", "1.0-dev1", "1.0-dev2", "1.0-alpha1", "1.0-alpha2",
	"1.0-beta1", "1.0-beta2", "1.0-gamma", "1.0-rc1", "1.0-rc2", "1.0", "1.0.1", "2.0", "2.0.0b006", "2.0.0b012", "2.0.0"}

func TestCompareRevisionsIvyOrder(t *testing.T) {
	got := append([]string{}, ivySorted...)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sort.SliceStable(got, func(i, j int) bool { return revision.Compare(got[i], got[j]) < 0 })
		if diff := cmp.Diff(ivySorted, got); diff != "" {
			t.Fatalf("order differs from Ivy's (-ivy +got):\n%s", diff)
		}
	}
}

func TestCompareRevisions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2.0.7", "1.7.36", 1}, // oracle: real-evict-direct-older-loses
		{"2.0.16", "2.0.7", 1}, // numeric, not lexical (oracle: real-evict-direct-newer-wins)
		{"1.1", "1.0", 1},      // oracle: ivym2-conflict-latest
		{"3.0", "2.0", 1},
		{"1.0", "1.0", 0},
		{"1.0", "1-0", 0},           // separators are equivalent
		{"1.0-SNAPSHOT", "1.0", -1}, // a word after the common prefix loses
		{"1.0.Final", "1.0", -1},
		{"1.0-final", "1.0-rc1", 1},  // final > rc
		{"1.0-rc1", "1.0-beta", 1},   // rc > other words
		{"1.0-dev", "1.0-alpha", -1}, // dev < other words
		{"debian", "2.x", -1},        // numbers beat words (Debian's versions)
		{"2.x", "2.14.0", -1},
		{"1.10", "1.9", 1},
		{"99999999999999999999", "1", 1}, // beyond int64
		{"", "1", -1},
		{"1.0a", "1.0", -1},
		{"4.1.48.Final", "4.1.48", -1},
	} {
		if got := revision.Compare(tc.a, tc.b); sign(got) != tc.want {
			t.Errorf("CompareRevisions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := revision.Compare(tc.b, tc.a); sign(got) != -tc.want {
			t.Errorf("CompareRevisions(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func sign(i int) int {
	switch {
	case i < 0:
		return -1
	case i > 0:
		return 1
	}
	return 0
}
