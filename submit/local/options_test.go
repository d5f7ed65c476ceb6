package local

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMakeOptions: each With… sets its option; what none sets takes the
// default its setter documents.
func TestMakeOptions(t *testing.T) {
	in, out, errw := strings.NewReader(""), io.Writer(&strings.Builder{}), io.Writer(&strings.Builder{})
	tests := []struct {
		name string
		opts []Option
		want options
	}{
		{"defaults", nil, options{killGrace: 30 * time.Second, stdout: io.Discard, stderr: io.Discard}},
		{"all set", []Option{
			WithSparkSubmit("/spark/bin/spark-submit"), WithTimeout(time.Minute),
			WithKillGrace(time.Second), WithJSON(true), WithStdio(in, out, errw),
		}, options{sparkSubmit: "/spark/bin/spark-submit", timeout: time.Minute,
			killGrace: time.Second, json: true, stdin: in, stdout: out, stderr: errw}},
		{"non-positive grace", []Option{WithKillGrace(-time.Second)}, options{killGrace: 30 * time.Second, stdout: io.Discard, stderr: io.Discard}},
	}
	same := cmp.Comparer(func(a, b any) bool { return a == b }) // the readers and writers: the same ones
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := makeOptions(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(options{}),
				cmp.FilterPath(func(p cmp.Path) bool {
					switch p.Last().String() {
					case ".stdin", ".stdout", ".stderr":
						return true
					}
					return false
				}, same)); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
