package safepath

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"org.slf4j_slf4j-api-2.0.7.jar", true},
		{"...", true},
		{"café.jar", true},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b.jar", false},
		{`a\b.jar`, false},
		{"a\x00b.jar", false},
		{"a\nb.jar", false},
		{"a\xff.jar", false},
		{strings.Repeat("a", MaxName), true},
		{strings.Repeat("a", MaxName+1), false},
	} {
		err := Name(tc.name)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrUnsafe)) {
			t.Errorf("Name(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestJoin(t *testing.T) {
	root := filepath.FromSlash("/cache/retrieve")
	for _, tc := range []struct {
		rel, want string // want "" = refused
	}{
		{"x.jar", "/cache/retrieve/x.jar"},
		{"org/slf4j/slf4j-api/2.0.7/slf4j-api-2.0.7.pom", "/cache/retrieve/org/slf4j/slf4j-api/2.0.7/slf4j-api-2.0.7.pom"},
		{"//////tmp/sec/PWNED/art/1/art-1.pom", "/cache/retrieve/tmp/sec/PWNED/art/1/art-1.pom"}, // ".." → "//" in a groupId
		{"", "/cache/retrieve"},
		{"../x.jar", ""},
		{"a/../../x.jar", ""},
		{"a/./b", ""},
		{"..", ""},
		{`..\x.jar`, ""},
		{"a\x00/b", ""},
	} {
		got, err := Join(root, tc.rel)
		if tc.want == "" {
			if err == nil || !errors.Is(err, ErrUnsafe) {
				t.Errorf("Join(%q) = %q, %v; want ErrUnsafe", tc.rel, got, err)
			}
			continue
		}
		if err != nil || got != filepath.FromSlash(tc.want) {
			t.Errorf("Join(%q) = %q, %v; want %q", tc.rel, got, err, tc.want)
		}
	}
}

func TestJoinSlash(t *testing.T) {
	for _, tc := range []struct {
		prefix, rel, want string // want "" = refused
	}{
		{"/opt/spark/prebake/jars", "x.jar", "/opt/spark/prebake/jars/x.jar"},
		{"p/", "jars/sha256/ab/x.jar", "p/jars/sha256/ab/x.jar"},
		{"", "jars/sha256/ab/x.jar", "jars/sha256/ab/x.jar"},
		{"/opt/spark/prebake/jars", "../../../../opt/spark/jars/spark-core_2.12-3.5.0.jar", ""},
		{"p/", "jars/sha256/ab/../../../../x.jar", ""},
		{"/opt/spark/prebake/jars", "..", ""},
	} {
		got, err := JoinSlash(tc.prefix, tc.rel)
		if tc.want == "" {
			if err == nil {
				t.Errorf("JoinSlash(%q, %q) = %q, want an error", tc.prefix, tc.rel, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("JoinSlash(%q, %q) = %q, %v; want %q", tc.prefix, tc.rel, got, err, tc.want)
		}
	}
}

func TestWithin(t *testing.T) {
	for p, want := range map[string]bool{"/a/b": true, "/a/b/c": true, "/a/bc": false, "/a": false, "/a/b/../c": false, "/a/b/c/../../b/d": true} {
		if got := Within("/a/b", p); got != want {
			t.Errorf("Within(/a/b, %s) = %v", p, got)
		}
	}
}
