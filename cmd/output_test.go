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
		{"no format", []string{"inspect", "-o", "xml", "nonexistent.lock"}, `invalid argument "xml" for "-o, --output" flag: not an output format: want one of text|json|yaml|tree|names`},
		{"no format, persistent before the command", []string{"-o=JSON", "inspect", "nonexistent.lock"}, `invalid argument "JSON"`},
		{"not this command's", []string{"inspect", "-o", "names", "nonexistent.lock"}, `-o "names": must be one of [text json]`},
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
