package pypi

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expectations below were recorded from packaging 21.3 (the copy pip
// 23.2.1 vendors): str(Version(s)), sorted(key=Version) and
// Specifier(spec).contains(v, prereleases=True).

func TestParseVersionNormalizes(t *testing.T) {
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
		v, err := ParseVersion(tc.in)
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, v.String()); diff != "" {
			t.Errorf("ParseVersion(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseVersionRefuses(t *testing.T) {
	for _, in := range []string{"", "french toast", "1.0+", "1..0", "1.0-", "=1.0", "1.0 a1", "1.0+loc@l",
		"99999999999999999999999", "1.0\x00", "1.*"} {
		if _, err := ParseVersion(in); !errors.Is(err, ErrVersion) {
			t.Errorf("ParseVersion(%q) = %v, want ErrVersion", in, err)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	// PEP 440's ordering, with epochs and local labels.
	order := []string{"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456",
		"1.0b2", "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5",
		"1.0+abc.7", "1.0+5", "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1", "1!0.1"}
	vs := make([]Version, len(order))
	for i, s := range order {
		var err error
		if vs[i], err = ParseVersion(s); err != nil {
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
	a, _ := ParseVersion("1.0")
	b, _ := ParseVersion("1.0.0.0")
	if a.Compare(b) != 0 {
		t.Errorf("1.0 and 1.0.0.0 differ")
	}
}

func TestSpecifierContains(t *testing.T) {
	for _, tc := range []struct {
		spec, version string
		want          bool
	}{
		{"==1.2.*", "1.2.0", true},
		{"==1.2.*", "1.2.3a1", true},
		{"==1.2.*", "1.2.post1", true},
		{"==1.2.*", "1.3", false},
		{"==1.2.*", "1", false},
		{"==1.0.*", "1", true},
		{"==1.*", "1.0rc1", true},
		{"!=1.2.*", "1.2.5", false},
		{"!=1.2.*", "1.3", true},
		{"==1.2", "1.2.0", true},
		{"==1.2", "1.2+local", true},
		{"==1.2+local", "1.2", false},
		{"==1.2+local", "1.2+local", true},
		{"==1.2+LOCAL", "1.2+local", true},
		{"==1!1.0", "1.0", false},
		{"==1!1.0", "1!1.0.0", true},
		{"~=2.2", "2.3", true},
		{"~=2.2", "3.0", false},
		{"~=2.2", "2.1", false},
		{"~=1.4.5", "1.4.9", true},
		{"~=1.4.5", "1.5.0", false},
		{"~=1.4.5a4", "1.4.5", true},
		{"~=1.4.5a4", "1.4.5a3", false},
		{"~=2.2.post3", "2.2.post4", true},
		{"~=2.2.post3", "2.2", false},
		{"~=1.0", "1.0.dev1", false},
		{"<3.1", "3.1.0a1", false},
		{"<3.1", "3.0.9", true},
		{"<3.1a2", "3.1a1", true},
		{"<3.1", "3.1.dev0", false},
		{"<3.1", "3.0.0a1", true},
		{"<=3.1", "3.1+local", true},
		{"<=3.1", "3.1.0.post1", false},
		{">1.7", "1.7.1", true},
		{">1.7", "1.7.post2", false},
		{">1.7.post2", "1.7.post3", true},
		{">1.7", "1.7+local", false},
		{">1.7", "1.8+local", true},
		{">1.7", "1.7.0a1", false},
		{">=1.7", "1.7+local", true},
		{">=1.7", "1.7.dev0", false},
		{"===1.0", "1.0", true},
		{"===1.0", "1.0.0", false},
		{"==1.0.0", "1.0", true},
		{"!=1.0", "1.0+l", false},
		{">=2.0", "2.0.0b1", false},
		{">1.0.dev0", "1.0", true},
		{"<1.0.dev0", "1.0a1", false},
		{"==2.0.post0", "2.0.post0", true},
		{"==2.0.post0", "2.0", false},
		{"<=2.0", "2.0.post1", false},
		{">=1.0", "1.0.post1.dev0", true},
		{">1.0", "1.0.post1.dev0", false},
		{">1.0.post1", "1.0.post1.dev0", false},
		{">1.0", "1.0.1.dev0", true},
	} {
		sp, err := ParseSpecifier(tc.spec)
		if err != nil {
			t.Errorf("ParseSpecifier(%q): %v", tc.spec, err)
			continue
		}
		v, err := ParseVersion(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if got := sp.Contains(v); got != tc.want {
			t.Errorf("%s contains %s = %v, want %v", tc.spec, tc.version, got, tc.want)
		}
	}
}

func TestSpecifiersPrereleases(t *testing.T) {
	for _, tc := range []struct {
		specs, version string
		pre, want      bool
	}{
		{">=1.0", "2.0a1", false, false},
		{">=1.0", "2.0a1", true, true},
		{">=1.0a1", "2.0a1", false, true}, // the set names a pre-release
		{">=1.0,!=2.0a1", "2.0a2", false, false},
		{">=1.0,<2", "1.5", false, true},
		{">=1.0,<2", "2.0", false, false},
		{"", "1.0", false, true},
	} {
		ss, err := ParseSpecifiers(tc.specs)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := ParseVersion(tc.version)
		if got := ss.Contains(v, tc.pre); got != tc.want {
			t.Errorf("%q contains %s (pre %v) = %v, want %v", tc.specs, tc.version, tc.pre, got, tc.want)
		}
	}
}

func TestParseSpecifierRefuses(t *testing.T) {
	for _, in := range []string{"1.0", "=>1.0", "==1.0.*.*", ">=1.0.*", "~=1", "~=1.0+local", "<1.0+local",
		"==1.0a1.*", "==1.0+l.*", "== 1.0 1", ">=", "===", "== french"} {
		if _, err := ParseSpecifier(in); !errors.Is(err, ErrSpecifier) {
			t.Errorf("ParseSpecifier(%q) = %v, want ErrSpecifier", in, err)
		}
	}
}

func TestSpecifiersPinned(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"==1.0", true}, {"===1.0", true}, {"==1.*", false}, {">=1.0", false}, {"==1.0,<2", false}, {"", false},
	} {
		ss, err := ParseSpecifiers(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := ss.Pinned(); got != tc.want {
			t.Errorf("%q pinned = %v, want %v", tc.in, got, tc.want)
		}
	}
}
