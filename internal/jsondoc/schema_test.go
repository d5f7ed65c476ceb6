package jsondoc

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children,omitempty"`
}

type loud string

func (l loud) MarshalJSON() ([]byte, error) { return json.Marshal(string(l) + "!") }

type sample struct {
	*inner                  // flattened
	A       string          `json:"a"` // shadows inner's a
	Skip    string          `json:"-"`
	hidden  string          // unexported: not encoded
	Untaged bool            // key "Untaged"
	When    time.Time       `json:"when"`
	Took    time.Duration   `json:"took"`
	Count   int64           `json:"count,string"`
	Tags    map[string]int  `json:"tags"`
	Tree    *node           `json:"tree,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Any     any             `json:"any"`
	Loud    loud            `json:"loud"`
	Blob    []byte          `json:"blob,omitempty"`
}

var _ = sample{}.hidden

// TestSchemaOf: the reflector follows encoding/json: embedded structs
// flattened with the outer field winning, "-" and unexported fields left
// out, omitempty not required, ",string" a string, recursive types through
// $defs, and the custom schemas given for a type with its own MarshalJSON.
func TestSchemaOf(t *testing.T) {
	s, err := SchemaOf(Doc{Name: "sample", Command: "c", Type: TypeOf[sample]()}, map[reflect.Type]*Schema{TypeOf[loud](): {Type: Types{"string"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Untaged", "a", "any", "b", "blob", "count", "loud", "raw", "tags", "took", "tree", "when"}, s.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "Untaged", "when", "took", "count", "tags", "any", "loud"}, s.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	for key, want := range map[string]Types{"count": {"string"}, "when": {"string"}, "took": {"integer"}, "tags": {"object", "null"}, "loud": {"string"}, "b": {"integer"}} {
		if got := s.Properties[key].Type; !cmp.Equal(got, want) {
			t.Errorf("%s: type %v, want %v", key, got, want)
		}
	}
	if s.Defs["jsondoc.node"] == nil || s.Defs["jsondoc.node"].Properties["children"].Items.AnyOf[0].Ref != "#/$defs/jsondoc.node" {
		t.Errorf("the recursive type is not a $def referring to itself: %+v", s.Defs)
	}
	if _, err := SchemaOf(Doc{Name: "x", Type: TypeOf[sample]()}, nil); err == nil {
		t.Error("a type with its own MarshalJSON and no custom schema: no error")
	}
	// The schema round-trips through its JSON form.
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var back Schema
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, &back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestValidate: a document from the type validates; a missing required
// key, an unknown key, a wrong type and a bad nested node do not.
func TestValidate(t *testing.T) {
	s, err := SchemaOf(Doc{Name: "node", Type: TypeOf[node]()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []string
	}{
		{`{"name":"r","children":[{"name":"c"},null]}`, nil},
		{`{}`, []string{`$: required key "name" missing`}},
		{`{"name":"r","extra":1}`, []string{"$.extra: not in the schema"}},
		{`{"name":3}`, []string{"$.name: integer, want string"}},
		{`{"name":"r","children":[{"name":true}]}`, []string{"$.children[0]: object matches none of anyOf"}},
		{`[1]`, []string{"$: array, want object"}},
		{`{`, []string{"not JSON: unexpected EOF"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, s.Validate([]byte(tt.doc))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.doc, diff)
		}
	}
}

// TestIndex: the index replaces only its block, and a missing block is an
// error.
func TestIndex(t *testing.T) {
	docs := []Doc{{Name: "a", Command: "prebake a -o json", Type: TypeOf[inner]()}, {Name: "b", Command: "prebake b", Type: TypeOf[[]inner](), NoGolden: "no server"}}
	md := "# T\n\n" + IndexBegin + "\nold\n" + IndexEnd + "\n\n### a\n"
	got, err := WithIndex(md, Index(docs))
	if err != nil {
		t.Fatal(err)
	}
	want := "# T\n\n" + IndexBegin + "\n| Document | Printed by | Go type | Schema | Example |\n|---|---|---|---|---|\n" +
		"| [`a`](#a) | prebake a -o json | `jsondoc.inner` | [schema](schemas/a.schema.json) | [example](../testdata/json/a.json) |\n" +
		"| [`b`](#b) | prebake b | `[]jsondoc.inner` | [schema](schemas/b.schema.json) | none: no server |\n" + IndexEnd + "\n\n### a\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := WithIndex("# no block\n", Index(docs)); err == nil {
		t.Error("no block: no error")
	}
}
