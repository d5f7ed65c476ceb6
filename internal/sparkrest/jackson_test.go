package sparkrest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIndentJacksonLayout(t *testing.T) {
	in := `{"action":"X","appArgs":[],"list":["a","b"],"env":{},"nested":{"k":"v<&>\u0001\t","n":1.5,"b":true,"z":null},"objs":[{"a":1}]}`
	want := "{\n" +
		"  \"action\" : \"X\",\n" +
		"  \"appArgs\" : [ ],\n" +
		"  \"list\" : [ \"a\", \"b\" ],\n" +
		"  \"env\" : { },\n" +
		"  \"nested\" : {\n" +
		"    \"k\" : \"v<&>\\u0001\\t\",\n" +
		"    \"n\" : 1.5,\n" +
		"    \"b\" : true,\n" +
		"    \"z\" : null\n" +
		"  },\n" +
		"  \"objs\" : [ {\n" +
		"    \"a\" : 1\n" +
		"  } ]\n" +
		"}"
	got, err := Indent([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
