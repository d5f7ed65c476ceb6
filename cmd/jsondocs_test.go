package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/jsondoc"
)

// docSections is the text of each document in docs/json-output.md, from
// its heading "### NAME" to the next one.
func docSections(md string) map[string]string {
	re := regexp.MustCompile(`(?m)^### ([a-z0-9-]+)\n`)
	locs := re.FindAllStringSubmatchIndex(md, -1)
	out := map[string]string{}
	for i, l := range locs {
		end := len(md)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[md[l[2]:l[3]]] = md[l[1]:end]
	}
	return out
}

var (
	// a key with its value: "key": …
	docKeyValue = regexp.MustCompile(`"([a-z][A-Za-z0-9]*)"\s*:`)
	// a key in a list of keys: {"a", "b"} or ["a", "b"] of objects
	docKeyList = regexp.MustCompile(`[{,]\s*"([a-z][A-Za-z0-9]*)"\s*[,}]`)
)

// TestJSONOutputDoc checks docs/json-output.md against the registry and
// the schemas: its generated index is current (make docs), every document
// has a section, every top-level key of a document's schema is named in
// its section, and every key the section names is one of the schema's, so
// a key added, renamed or dropped without the doc fails here.
func TestJSONOutputDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "json-output.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	want, err := jsondoc.WithIndex(md, jsondoc.Index(JSONDocs()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, md); diff != "" {
		t.Errorf("docs/json-output.md: the index is stale: run make docs (-generated +committed):\n%s", diff)
	}
	sections := docSections(md)
	for _, d := range JSONDocs() {
		sec, ok := sections[d.Name]
		if !ok {
			t.Errorf("docs/json-output.md: no section \"### %s\" for %s", d.Name, d.Command)
			continue
		}
		delete(sections, d.Name)
		s, err := JSONSchema(d)
		if err != nil {
			t.Fatal(err)
		}
		all := s.AllKeys()
		for _, k := range s.Keys() {
			if !strings.Contains(sec, `"`+k+`"`) {
				t.Errorf("docs/json-output.md, %s: the key %q of %s is not documented", d.Name, k, d.Type)
			}
		}
		for _, re := range []*regexp.Regexp{docKeyValue, docKeyList} {
			for _, m := range re.FindAllStringSubmatch(sec, -1) {
				if !slices.Contains(all, m[1]) {
					t.Errorf("docs/json-output.md, %s: names the key %q, which %s does not have", d.Name, m[1], d.Type)
				}
			}
		}
	}
	for n := range sections {
		t.Errorf("docs/json-output.md: section %q is no document of JSONDocs", n)
	}
}
