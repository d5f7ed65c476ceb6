package sbom_test

import (
	"encoding/json"
	"errors"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/sbom"
	"github.com/prebake/prebake/lock"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestPURL(t *testing.T) {
	tests := []struct {
		name                      string
		group, art, ver, cls, ext string
		want                      string
	}{
		{"plain jar", "org.slf4j", "slf4j-api", "2.0.7", "", "jar", "pkg:maven/org.slf4j/slf4j-api@2.0.7"},
		{"classifier", "net.sf.json-lib", "json-lib", "2.4", "jdk15", "jar", "pkg:maven/net.sf.json-lib/json-lib@2.4?classifier=jdk15"},
		{"classifier and non-jar type, keys sorted", "g", "a", "1", "tests", "zip", "pkg:maven/g/a@1?classifier=tests&type=zip"},
		{"plus in version is encoded", "g", "a", "1.0+build.5", "", "jar", "pkg:maven/g/a@1.0%2Bbuild.5"},
		{"snapshot", "g", "a", "1.0-SNAPSHOT", "", "", "pkg:maven/g/a@1.0-SNAPSHOT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sbom.PURL(tt.group, tt.art, tt.ver, tt.cls, tt.ext)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PURL (-want +got):\n%s", diff)
			}
			g, a, v, q := parsePURL(t, got)
			if diff := cmp.Diff([]string{tt.group, tt.art, tt.ver, tt.cls}, []string{g, a, v, q.Get("classifier")}); diff != "" {
				t.Errorf("PURL does not parse back (-want +got):\n%s", diff)
			}
		})
	}
}

// purlRE is the purl spec's syntax for the maven type:
// scheme:type/namespace/name@version?qualifiers, with percent-encoded
// segments and lowercase qualifier keys.
var purlRE = regexp.MustCompile(`^pkg:maven/([A-Za-z0-9.\-_~%:]+)/([A-Za-z0-9.\-_~%:]+)@([A-Za-z0-9.\-_~%:]+)(?:\?([a-z][a-z0-9.\-_]*=[^&#]+(?:&[a-z][a-z0-9.\-_]*=[^&#]+)*))?$`)

func parsePURL(t *testing.T, p string) (group, artifact, version string, q url.Values) {
	t.Helper()
	m := purlRE.FindStringSubmatch(p)
	if m == nil {
		t.Fatalf("purl %q does not match the purl syntax", p)
	}
	dec := func(s string) string {
		u, err := url.PathUnescape(s)
		if err != nil {
			t.Fatalf("purl %q: %v", p, err)
		}
		return u
	}
	var keys []string
	q = url.Values{}
	if m[4] != "" {
		for _, kv := range strings.Split(m[4], "&") {
			k, v, _ := strings.Cut(kv, "=")
			keys = append(keys, k)
			q.Set(k, dec(v))
		}
	}
	if !slices.IsSorted(keys) {
		t.Errorf("purl %q: qualifier keys not sorted", p)
	}
	if q.Get("type") == "jar" {
		t.Errorf("purl %q: default type=jar must be left out", p)
	}
	return dec(m[1]), dec(m[2]), dec(m[3]), q
}

func readLock(t *testing.T) *lock.File {
	t.Helper()
	l, err := lock.Read("../../testdata/lockdiff/base.lock")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var (
	uuidRE   = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	sha256RE = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// TestShape checks the generic JSON against what the CycloneDX 1.5 schema
// requires of the fields prebake writes.
func TestShape(t *testing.T) {
	l := readLock(t)
	b, err := sbom.New(l, sbom.WithToolVersion("v0.0.0-test"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	str := func(m map[string]any, k string) string {
		t.Helper()
		s, ok := m[k].(string)
		if !ok || s == "" {
			t.Fatalf("%q missing or not a non-empty string in %v", k, m)
		}
		return s
	}
	if got := str(doc, "bomFormat"); got != "CycloneDX" {
		t.Errorf("bomFormat = %q", got)
	}
	if got := str(doc, "specVersion"); got != "1.5" {
		t.Errorf("specVersion = %q", got)
	}
	if got := str(doc, "serialNumber"); !uuidRE.MatchString(got) {
		t.Errorf("serialNumber %q does not match the schema's pattern", got)
	}
	if v, ok := doc["version"].(float64); !ok || v < 1 {
		t.Errorf("version = %v, want an integer >= 1", doc["version"])
	}
	meta := doc["metadata"].(map[string]any)
	if _, err := time.Parse(time.RFC3339, str(meta, "timestamp")); err != nil {
		t.Errorf("metadata.timestamp: %v", err)
	}
	tools := meta["tools"].(map[string]any)["components"].([]any)
	if tool := tools[0].(map[string]any); str(tool, "name") != "prebake" || str(tool, "type") != "application" || str(tool, "version") != "v0.0.0-test" {
		t.Errorf("tool = %v", tool)
	}
	comps := doc["components"].([]any)
	if len(comps) != len(l.Artifacts) {
		t.Fatalf("%d components for %d artifacts", len(comps), len(l.Artifacts))
	}
	refs := map[string]bool{}
	for i, c := range comps {
		c := c.(map[string]any)
		a := l.Artifacts[i]
		if got := str(c, "type"); got != "library" {
			t.Errorf("%s: type %q", a.Coord, got)
		}
		purl := str(c, "purl")
		if ref := str(c, "bom-ref"); ref != purl || refs[ref] {
			t.Errorf("%s: bom-ref %q is not the purl %q or is not unique", a.Coord, ref, purl)
		}
		refs[purl] = true
		g, n, v, q := parsePURL(t, purl)
		coord := g + ":" + n + ":" + v
		if cl := q.Get("classifier"); cl != "" {
			coord += ":" + cl
		}
		if coord != a.Coord || g != str(c, "group") || n != str(c, "name") || v != str(c, "version") {
			t.Errorf("component %v does not match artifact %s", c, a.Coord)
		}
		h := c["hashes"].([]any)[0].(map[string]any)
		if str(h, "alg") != "SHA-256" || !sha256RE.MatchString(str(h, "content")) || str(h, "content") != a.Sha256 {
			t.Errorf("%s: hashes %v", a.Coord, h)
		}
		ref := c["externalReferences"].([]any)[0].(map[string]any)
		u, err := url.Parse(str(ref, "url"))
		if str(ref, "type") != "distribution" || err != nil || !strings.HasPrefix(u.String(), a.Repository) || !strings.HasSuffix(u.Path, ".jar") {
			t.Errorf("%s: externalReferences %v (%v)", a.Coord, ref, err)
		}
	}
}

func TestDistributionURL(t *testing.T) {
	l := &lock.File{Artifacts: []lock.Artifact{
		{Coord: "net.sf.json-lib:json-lib:2.4:jdk15", File: "net.sf.json-lib_json-lib-2.4-jdk15.jar", Repository: "https://user:pw@repo.example.com/m2", Sha256: strings.Repeat("a", 64)},
	}}
	b, err := sbom.New(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []sbom.ExternalReference{{Type: "distribution", URL: "https://repo.example.com/m2/net/sf/json-lib/json-lib/2.4/json-lib-2.4-jdk15.jar"}}
	if diff := cmp.Diff(want, b.Components[0].ExternalReferences); diff != "" {
		t.Errorf("externalReferences (-want +got):\n%s", diff)
	}
}

func TestDeterministic(t *testing.T) {
	l := readLock(t)
	a, _ := sbom.New(l)
	b, _ := sbom.New(readLock(t))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two SBOMs of one lock differ:\n%s", diff)
	}
	other, err := lock.Read("../../testdata/lockdiff/content-changed.lock")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := sbom.New(other)
	if a.SerialNumber == c.SerialNumber {
		t.Errorf("different locks share serialNumber %s", a.SerialNumber)
	}
	if a.Metadata.Timestamp != "1970-01-01T00:00:01Z" {
		t.Errorf("default timestamp %s", a.Metadata.Timestamp)
	}
	ts := time.Unix(1700000000, 0)
	d, _ := sbom.New(l, sbom.WithTimestamp(ts))
	if d.Metadata.Timestamp != "2023-11-14T22:13:20Z" {
		t.Errorf("WithTimestamp: %s", d.Metadata.Timestamp)
	}
}

func TestMalformed(t *testing.T) {
	l := &lock.File{Artifacts: []lock.Artifact{{Coord: "g:a", File: "g_a.jar", Sha256: strings.Repeat("a", 64)}}}
	if _, err := sbom.New(l); errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("coord g:a: %v (kind %v), want kind %v", err, errdefs.KindOf(err), errdefs.Invalid)
	}
}

// TestWheels: a wheel is a pkg:pypi component with its sha256; the jars
// of the same lock stay pkg:maven components.
func TestWheels(t *testing.T) {
	l, err := lock.Read("../../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sbom.New(l)
	if err != nil {
		t.Fatal(err)
	}
	type short struct{ PURL, Name, Version, Sha256 string }
	var got []short
	for _, c := range b.Components {
		got = append(got, short{c.PURL, c.Name, c.Version, c.Hashes[0].Content})
	}
	want := []short{
		{"pkg:pypi/numpy@1.26.4", "numpy", "1.26.4", l.Artifacts[0].Sha256},
		{"pkg:maven/org.slf4j/slf4j-api@2.0.7", "slf4j-api", "2.0.7", l.Artifacts[1].Sha256},
		{"pkg:pypi/typing-extensions@4.12.2", "typing-extensions", "4.12.2", l.Artifacts[2].Sha256},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	for in, want := range map[[2]string]string{
		{"Typing_Extensions", "4.12.2"}: "pkg:pypi/typing-extensions@4.12.2",
		{"torch", "2.3.0+cpu"}:          "pkg:pypi/torch@2.3.0%2Bcpu",
		{"zope.interface", "1!6.0"}:     "pkg:pypi/zope-interface@1%216.0",
	} {
		if got := sbom.PypiPURL(in[0], in[1]); got != want {
			t.Errorf("PypiPURL(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	odd := &lock.File{Artifacts: []lock.Artifact{{Kind: "egg", File: "x.egg", Sha256: strings.Repeat("a", 64)}}}
	if _, err := sbom.New(odd); !errors.Is(err, lock.ErrUnsupportedKind) || errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("an unknown kind: %v, want ErrUnsupportedKind (invalid)", err)
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct{ lock, golden string }{
		{"base.lock", "base.cdx.json"},
		{"python.lock", "python.cdx.json"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			l, err := lock.Read(filepath.Join("../../testdata/lockdiff", tc.lock))
			if err != nil {
				t.Fatal(err)
			}
			testGolden(t, l, filepath.Join("../../testdata/sbom", tc.golden))
		})
	}
}

func testGolden(t *testing.T, l *lock.File, path string) {
	b, err := sbom.New(l, sbom.WithToolVersion("v0.0.0-test"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
