package pypi

import (
	"errors"
	"testing"
)

// The expectations below were recorded from packaging 21.3 (the copy pip
// 23.2.1 vendors): Specifier(spec).contains(v, prereleases=True).

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
