package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestOutputFormatIsTyped: -o parses into an outputFormat, so a value that
// is no format fails as a flag error (64) before the command runs, and a
// format the command does not print fails with the command's list.
func TestOutputFormatIsTyped(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no format", []string{"inspect", "-o", "xml", "nonexistent.lock"}, `prebake: prebake inspect: -o "xml": must be one of [text json json-pretty]` + "\n"},
		{"no format, persistent before the command", []string{"-o=JSON", "resolve", "g:a:1"}, `prebake resolve: -o "JSON": must be one of [tree names json json-pretty]`},
		{"no format for submit", []string{"submit", "-o", "xml", "--", "--master", "local", "app.jar"}, `-o "xml": must be one of [text json json-pretty yaml]`},
		{"not this command's", []string{"inspect", "-o", "names", "nonexistent.lock"}, `-o "names": must be one of [text json json-pretty]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runPrebake(context.Background(), tc.args...)
			if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
				t.Errorf("prebake %s: exit %d, stderr %q; want exit 64 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
			}
		})
	}
	var f outputFormat
	v := outputValue{&f}
	for _, want := range outputFormats {
		if err := v.Set(string(want)); err != nil || f != want || v.String() != string(want) {
			t.Errorf("Set(%q): %v, format %q", want, err, f)
		}
	}
}
