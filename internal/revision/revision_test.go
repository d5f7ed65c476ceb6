package revision

import (
	"math/big"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortIsCompare: Sort (each version parsed once) orders as a stable
// sort by Compare does, and cmpDigits is BigInteger's order.
func TestSortIsCompare(t *testing.T) {
	vs := []string{"1.0", "1.0-rc1", "1.0rc2", "1.0-dev", "1.0.final", "1.0.1", "1.00", "01.0", "1.0-beta",
		"2.0_2.12", "2.0-SNAPSHOT", "10.0", "9.9.9", "1.0+x", "", "1.0-RC3", "99999999999999999999999.1",
		"99999999999999999999998.9", "1.0-alpha", "1.0-Final", "a", "1", "1.0.0"}
	want := slices.Clone(vs)
	slices.SortStableFunc(want, Compare)
	got := slices.Clone(vs)
	Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Sort vs SortStableFunc(Compare) (-want +got):\n%s", d)
	}
	for _, p := range [][2]string{{"0", "00"}, {"007", "7"}, {"10", "9"}, {"123456789012345678901234567890", "123456789012345678901234567891"}, {"0001", "10"}} {
		x, _ := new(big.Int).SetString(p[0], 10)
		y, _ := new(big.Int).SetString(p[1], 10)
		if got, want := cmpDigits(p[0], p[1]), x.Cmp(y); got != want {
			t.Errorf("cmpDigits(%s, %s) = %d, want %d", p[0], p[1], got, want)
		}
	}
}
