package resolver

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/resolver/repo"

	"github.com/prebake/prebake/errdefs"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

func TestParseCoordinates(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []Coordinate
		wantErr string
	}{
		{in: "g:a:1", want: []Coordinate{{"g", "a", "1"}}},
		{in: "g/a:1", want: []Coordinate{{"g", "a", "1"}}},
		{in: "g/a/1", want: []Coordinate{{"g", "a", "1"}}},
		{in: "g:a:1,h:b:2", want: []Coordinate{{"g", "a", "1"}, {"h", "b", "2"}}},
		{in: "g:a:1,", want: []Coordinate{{"g", "a", "1"}}},  // Java split drops trailing empties
		{in: "g:a:1:", want: []Coordinate{{"g", "a", "1"}}},  // same inside a coordinate
		{in: "g:a: 1", want: []Coordinate{{"g", "a", " 1"}}}, // no trimming
		{in: "g:a:1:cls", wantErr: "must be in the form 'groupId:artifactId:version'. The coordinate provided is: g:a:1:cls"},
		{in: "g:a", wantErr: "must be in the form"},
		{in: ",g:a:1", wantErr: "must be in the form"},
		{in: " :a:1", wantErr: "The groupId cannot be null or be whitespace"},
		{in: "g: :1", wantErr: "The artifactId cannot be null"},
		{in: "g::1", wantErr: "The artifactId cannot be null"},
	} {
		got, err := ParseCoordinates(tc.in)
		if tc.wantErr != "" {
			if err == nil || !contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseCoordinates(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			} else if errdefs.KindOf(err) != errdefs.Invalid {
				t.Errorf("ParseCoordinates(%q) exit code %d, want %d", tc.in, errdefs.KindOf(err), errdefs.Invalid)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCoordinates(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseCoordinates(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestExcludes(t *testing.T) {
	rules, err := ParseExcludes([]string{"org.slf4j:*,com.x/y?z"})
	if err != nil {
		t.Fatal(err)
	}
	match := func(g, a string) bool {
		for _, r := range rules {
			if r.Matches(g, a) {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		g, a string
		want bool
	}{
		{"org.scala-lang", "scala-library", true},                // Spark default
		{"org.scala-lang", "scala-reflect", false},               // not excluded by Spark
		{"org.apache.spark", "spark-core_2.12", true},            // spark-core_*
		{"org.apache.spark", "spark-sql-kafka-0-10_2.12", false}, // trailing _ keeps it
		{"org.apache.spark", "spark-avro_2.12", false},
		{"org.apache.spark", "spark-hive_2.12", false},
		{"org.slf4j", "slf4j-api", true}, // user glob
		{"com.x", "y1z", true},
		{"com.x", "y12z", false},
		{"org.slf4jx", "slf4j-api", false},
	} {
		if got := match(tc.g, tc.a); got != tc.want {
			t.Errorf("excluded(%s:%s) = %v, want %v", tc.g, tc.a, got, tc.want)
		}
	}
	if _, err := ParseExcludes([]string{"g:a:1"}); err == nil || errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("g:a:1 as an exclusion: err = %v, want a DataErr", err)
	}
}

func FuzzParseCoordinates(f *testing.F) {
	for _, s := range []string{"g:a:1", "g/a/1,h:b:2", "g:a:1:c", ",", " : : ", "a:b:c,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseCoordinates(s)
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Group == "" || c.Artifact == "" || c.Version == "" {
				t.Fatalf("%q: empty part in %+v", s, c)
			}
			// Path containment: the parts pass the validator, and the jar
			// name stays in the retrieve directory.
			if err := maven.CheckCoord(maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: c.Version}); err != nil {
				t.Fatalf("%q: %+v: %v", s, c, err)
			}
			name := repo.SparkFileName(c.Group, c.Artifact, c.Version, "", "jar")
			if p, err := safepath.Join("/cache/retrieve/h", name); err == nil && filepath.Dir(p) != "/cache/retrieve/h" {
				t.Fatalf("%q: jar %q lands at %s", s, name, p)
			}
			if _, err := safepath.Join("/repo", repo.ModulePath(c.Group, c.Artifact, c.Version)+repo.ArtifactFileName(c.Artifact, c.Version, "", "pom")); err != nil {
				t.Fatalf("%q: the POM path leaves the repository: %v", s, err)
			}
		}
	})
}

// TestParseCoordinatesHostile: --packages parts go through the one
// coordinate validator (exit 65, naming the coordinate).
func TestParseCoordinatesHostile(t *testing.T) {
	for _, in := range []string{"..:a:1", "g:..:1", "g:a:..", `g:a\b:1`, "g:a:1\x00", "g:a%2e%2e:1", "g:a?x=1:1", "g\tx:a:1"} {
		_, err := ParseCoordinates(in)
		if errdefs.KindOf(err) != errdefs.Invalid || !errors.Is(err, maven.ErrInvalidCoordinate) || !strings.Contains(err.Error(), "coordinate ") {
			t.Errorf("ParseCoordinates(%q): err = %v, want 65 and ErrInvalidCoordinate", in, err)
		}
	}
}
