package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCopyAndCollect(t *testing.T) {
	in := `{"Action":"start","Package":"p/a"}
{"Action":"output","Package":"p/a","Test":"TestX","Output":"=== RUN   TestX\n"}
{"Action":"pass","Package":"p/a","Test":"TestX","Elapsed":3}
{"Action":"output","Package":"p/a","Output":"ok  \tp/a\t3.1s\n"}
{"Action":"pass","Package":"p/a","Elapsed":3.1}
# p/b [build failed]
{"Action":"output","Package":"p/b","Output":"FAIL\tp/b [build failed]\n"}
{"Action":"fail","Package":"p/b","Elapsed":0}
{"Action":"skip","Package":"p/c","Elapsed":0.5}
`
	var out strings.Builder
	rows, err := copyAndCollect(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := "=== RUN   TestX\nok  \tp/a\t3.1s\n# p/b [build failed]\nFAIL\tp/b [build failed]\n"
	if d := cmp.Diff(wantOut, out.String()); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
	got := format(rows)
	want := `
test time by package (wall, slowest first):
        3s  pass  p/a
        1s        2 packages under a second each
        4s        sum over 3 packages (two binaries run at a time)
`
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
}
