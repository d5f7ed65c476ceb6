package pep440

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expectations below were recorded from packaging 21.3 (the copy pip
// 23.2.1 vendors): str(Version(s)) and sorted(key=Version).

func TestParseNormalizes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"v1.0", "1.0"},
		{"1.0-RC.1", "1.0rc1"},
		{"1.0.0ALPHA1", "1.0.0a1"},
		{"1.0-1", "1.0.post1"},
		{"1.0_post_2", "1.0.post2"},
		{"1.0rev3", "1.0.post3"},
		{"1.0.r4", "1.0.post4"},
		{"1.0-dev", "1.0.dev0"},
		{"1.0c1", "1.0rc1"},
		{"1.0pre2", "1.0rc2"},
		{"1.0preview3", "1.0rc3"},
		{"01.002", "1.2"},
		{"1!2.0b3.post4.dev5+Ubuntu-1.2", "1!2.0b3.post4.dev5+ubuntu.1.2"},
		{"  1.0  ", "1.0"},
		{"1.0a", "1.0a0"},
		{"1.0.post", "1.0.post0"},
		{"1.0+abc_DEF-1", "1.0+abc.def.1"},
	} {
		v, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, v.String()); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{"", "french toast", "1.0+", "1..0", "1.0-", "=1.0", "1.0 a1", "1.0+loc@l",
		"99999999999999999999999", "1.0\x00", "1.*"} {
		if _, err := Parse(in); !errors.Is(err, ErrVersion) {
			t.Errorf("Parse(%q) = %v, want ErrVersion", in, err)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	// PEP 440's ordering, with epochs and local labels.
	order := []string{"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456",
		"1.0b2", "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5",
		"1.0+abc.7", "1.0+5", "1.0+9", "1.0+10", "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1", "1!0.1"}
	vs := make([]Version, len(order))
	for i, s := range order {
		var err error
		if vs[i], err = Parse(s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range vs {
		for j := range vs {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := vs[i].Compare(vs[j]); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	a, _ := Parse("1.0")
	b, _ := Parse("1.0.0.0")
	if a.Compare(b) != 0 {
		t.Errorf("1.0 and 1.0.0.0 differ")
	}
}

// TestCompareStrings: local labels order by number (+9 before +10, the
// string order's mistake), trailing zeros do not count, and a string that
// is no version sorts after every version.
func TestCompareStrings(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.0+9", "1.0+10", -1},
		{"1.0", "1.0.0", 0},
		{"1.0", "1.0+1", -1},
		{"2.0", "10.0", -1},
		{"not a version", "1.0", 1},
		{"1.0", "not a version", -1},
		{"b", "a", 1},
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
