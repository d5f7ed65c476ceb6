package maven

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/internal/testenv"
)

func TestPeek(t *testing.T) {
	// Everything Peek reads, and elements it must not take for them: a
	// profile's, a plugin's, nested ones.
	const full = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.p</groupId>
    <artifactId>parent</artifactId>
    <version>3</version>
    <relativePath/>
  </parent>
  <artifactId>m</artifactId>
  <packaging> bundle </packaging>
  <properties>
    <a.version>1.${minor}</a.version>
    <minor>2</minor>
  </properties>
  <build>
    <plugins>
      <plugin>
        <dependencies>
          <dependency><groupId>org.pl</groupId><artifactId>pl</artifactId></dependency>
        </dependencies>
      </plugin>
    </plugins>
  </build>
  <dependencies>
    <dependency>
      <groupId>org.a</groupId><artifactId>a</artifactId><version>${a.version}</version>
      <exclusions><exclusion><groupId>x</groupId><artifactId>y</artifactId></exclusion></exclusions>
    </dependency>
    <dependency><groupId>org.b</groupId><artifactId>b</artifactId></dependency>
    <dependency><groupId>org.t</groupId><artifactId>t</artifactId><version>1</version><scope>test</scope></dependency>
    <dependency><groupId>org.o</groupId><artifactId>o</artifactId><version>1</version><optional>true</optional></dependency>
  </dependencies>
  <dependencyManagement>
    <dependencies>
      <dependency><groupId>org.b</groupId><artifactId>b</artifactId><version>${b.version}</version></dependency>
      <dependency><groupId>org.bom</groupId><artifactId>bom</artifactId><version>1</version><scope>import</scope></dependency>
    </dependencies>
  </dependencyManagement>
  <profiles>
    <profile>
      <properties><minor>9</minor></properties>
      <dependencies><dependency><groupId>org.x</groupId><artifactId>x</artifactId><version>1</version></dependency></dependencies>
    </profile>
  </profiles>
</project>`
	for _, tt := range []struct {
		name, pom string
		want      Hints
	}{
		{"full", full, Hints{
			Parent:     &Coord{"org.p", "parent", "3"},
			Packaging:  "bundle",
			Properties: map[string]string{"a.version": "1.${minor}", "minor": "2"},
			Dependencies: []DependencyHint{
				{Coord: Coord{"org.a", "a", "${a.version}"}},
				{Coord: Coord{"org.b", "b", ""}},
				{Coord: Coord{"org.t", "t", "1"}, Scope: "test"},
				{Coord: Coord{"org.o", "o", "1"}, Optional: "true"},
			},
			Managed: []DependencyHint{
				{Coord: Coord{"org.b", "b", "${b.version}"}},
				{Coord: Coord{"org.bom", "bom", "1"}, Scope: "import"},
			},
		}},
		{"no parent, model root", `<model><artifactId>a</artifactId></model>`,
			Hints{Properties: map[string]string{}}},
		{"empty parent", `<project><parent/></project>`,
			Hints{Parent: &Coord{}, Properties: map[string]string{}}},
		{"as the model reads: last properties block, last value, direct text only",
			`<project><properties><a>1</a></properties><properties><b>1</b><b>2<x>no</x>3</b><!-- c --></properties></project>`,
			Hints{Properties: map[string]string{"b": "23"}}},
		{"entities, CDATA, comments",
			`<project><packaging>a&amp;b&nbsp;<![CDATA[<c>]]><!-- x -->d</packaging></project>`,
			Hints{Packaging: "a&b\u00a0<c>d", Properties: map[string]string{}}},
		{"ISO-8859-1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><project><properties><n>caf\xe9</n></properties></project>",
			Hints{Properties: map[string]string{"n": "café"}}},
		{"namespaces", `<p:project xmlns:p="http://maven.apache.org/POM/4.0.0"><p:parent><p:groupId>g</p:groupId></p:parent></p:project>`,
			Hints{Parent: &Coord{Group: "g"}, Properties: map[string]string{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Peek([]byte(tt.pom))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Peek (-want +got):\n%s", diff)
			}
			checkPeekAgrees(t, []byte(tt.pom))
		})
	}
}

func TestPeekMalformed(t *testing.T) {
	for _, s := range []string{
		"", "  ", "<project>", "<project><parent>", "<notpom/>", "<project></project><project/>",
		"<project></parent>", "<project><a><b></a></b></project>", "<project>&unknown;</project>",
		`<?xml version="1.0" encoding="EBCDIC"?><project/>`, "<project><a x=1/></project>",
	} {
		if _, err := Peek([]byte(s)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Peek(%q): err = %v, want ErrMalformed", s, err)
		}
		if _, err := parse([]byte(s)); !errors.Is(err, ErrMalformed) {
			t.Errorf("parse(%q): err = %v, want ErrMalformed", s, err)
		}
	}
}

// hintsOf is what Peek must return for a POM parse accepts: the same
// elements, trimmed.
func hintsOf(p *project) Hints {
	trim := strings.TrimSpace
	dep := func(ds []pomDependency) []DependencyHint {
		var out []DependencyHint
		for _, d := range ds {
			out = append(out, DependencyHint{Coord{trim(d.GroupID), trim(d.ArtifactID), trim(d.Version)}, trim(d.Scope), trim(d.Optional)})
		}
		return out
	}
	h := Hints{Packaging: trim(p.Packaging), Properties: map[string]string{},
		Dependencies: dep(p.Dependencies), Managed: dep(p.DependencyManagement.Dependencies)}
	if p.Parent != nil {
		h.Parent = &Coord{trim(p.Parent.GroupID), trim(p.Parent.ArtifactID), trim(p.Parent.Version)}
	}
	for _, e := range p.Properties {
		h.Properties[e.Name] = trim(e.Value)
	}
	return h
}

// checkPeekAgrees checks the one-reader contract: a POM parse reads, Peek
// reads the same way; a POM Peek refuses, parse refuses too. (Peek may
// accept what parse refuses: it does not decode the elements it skips.)
func checkPeekAgrees(t *testing.T, data []byte) {
	t.Helper()
	h, perr := Peek(data)
	p, err := parse(data)
	if err != nil {
		return
	}
	if perr != nil {
		t.Fatalf("parse reads the POM, Peek: %v", perr)
	}
	if diff := cmp.Diff(hintsOf(p), h); diff != "" {
		t.Fatalf("Peek disagrees with parse (-parse +Peek):\n%s", diff)
	}
}

// TestPeekAgreesWithParse runs checkPeekAgrees over every POM of the
// repository's fixtures and of the shared corpus (real POMs from Maven
// Central and Debian); under the race detector, over one in eight.
func TestPeekAgreesWithParse(t *testing.T) {
	roots := []string{"../testdata", "../resolver/testdata", filepath.Join(testenv.SharedDir(t, ".."), "corpus")}
	n, seen := 0, 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(path, ".pom") {
				return err
			}
			if seen++; raceEnabled && seen%8 != 0 {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			t.Run(path, func(t *testing.T) { checkPeekAgrees(t, data) })
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < 1000 {
		t.Errorf("only %d POMs found", seen)
	}
}

func FuzzPeek(f *testing.F) {
	f.Add([]byte(pom(`<parent><groupId>g</groupId><artifactId>p</artifactId><version>1</version></parent><artifactId>a</artifactId>`)))
	f.Add([]byte(`<model><properties><a>1<b/>2</a><a>3</a></properties><properties/></model>`))
	f.Add([]byte(`<project><dependencies><dependency><groupId>g</groupId><version>${v}</version><scope>test</scope></dependency></dependencies></project>`))
	f.Add([]byte(`<project><dependencyManagement><dependencies><dependency><artifactId>b</artifactId><scope>import</scope></dependency></dependencies></dependencyManagement></project>`))
	f.Add([]byte("<?xml version=\"1.0\" encoding=\"latin1\"?><x:project><x:packaging>p&lt;\xe9</x:packaging></x:project>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Peek(data)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error not ErrMalformed: %v", err)
		}
		checkPeekAgrees(t, data)
	})
}

// TestHostilePOM: a deeply nested POM, a huge attribute, entity tricks and
// a huge text are refused or read in time and memory linear in their size,
// by Peek and by parse.
func TestHostilePOM(t *testing.T) {
	const mb = 1 << 20
	size := 8 * mb // of the huge elements; deep and many scale with it
	if raceEnabled {
		size /= 8
	}
	deep := strings.Repeat("<a>", size/40) + strings.Repeat("</a>", size/40)
	for _, tt := range []struct {
		name, pom string
		malformed bool // for parse; Peek reads what it can
	}{
		{"deep nesting", "<project><properties>" + deep + "</properties></project>", false},
		{"deep dependencies", "<project><dependencies><dependency><groupId>" + deep + "</groupId></dependency></dependencies></project>", false},
		{"huge attribute", `<project x="` + strings.Repeat("y", size) + `"><artifactId>a</artifactId></project>`, false},
		{"huge property", `<project><properties><p>` + strings.Repeat("y", size) + `</p></properties></project>`, false},
		{"many properties", `<project><properties>` + strings.Repeat("<p>1</p><q>2</q>", size/80) + `</properties></project>`, false},
		{"billion laughs", `<?xml version="1.0"?><!DOCTYPE project [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><project><version>&c;</version></project>`, true},
		{"external entity", `<?xml version="1.0"?><!DOCTYPE project [<!ENTITY x SYSTEM "file:///etc/passwd">]><project><version>&x;</version></project>`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.pom)
			for _, r := range []struct {
				name string
				read func([]byte) error
			}{
				{"Peek", func(b []byte) error { _, err := Peek(b); return err }},
				{"parse", func(b []byte) error { _, err := parse(b); return err }},
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				err := r.read(data)
				d := time.Since(start)
				runtime.ReadMemStats(&after)
				if err != nil && !errors.Is(err, ErrMalformed) {
					t.Errorf("%s: error not ErrMalformed: %v", r.name, err)
				}
				if r.name == "parse" && (err != nil) != tt.malformed {
					t.Errorf("parse: err = %v, want malformed %v", err, tt.malformed)
				}
				if err == nil && strings.Contains(tt.pom, "ENTITY") {
					t.Errorf("%s: a DOCTYPE entity was expanded", r.name)
				}
				// Linear bounds, generous for -race and a loaded machine
				// (measured: at most 40 bytes allocated per input byte, for
				// parse on tiny properties; Peek at most 15).
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64*uint64(len(data))+mb {
					t.Errorf("%s: allocated %d bytes for a %d-byte POM", r.name, alloc, len(data))
				}
				if d > 10*time.Second {
					t.Errorf("%s: took %v", r.name, d)
				}
			}
		})
	}
}
