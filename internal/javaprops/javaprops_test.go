package javaprops

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want map[string]string
	}{
		{"separators and comments", "# c\n! c\n  k1 = v1 \nk2:v2\nk3 v3\nk4=multi\\\n    line\nk5=\\u0041\\z\n",
			map[string]string{"k1": "v1 ", "k2": "v2", "k3": "v3", "k4": "multiline", "k5": "Az"}},
		{"escapes", "a=1\nb : 2\nc 3\nd=x\\\n   y\ne=\\u0041\\t\nf\\=g=h\n\nempty=\n",
			map[string]string{"a": "1", "b": "2", "c": "3", "d": "xy", "e": "A\t", "f=g": "h", "empty": ""}},
		{"CRLF and a later duplicate wins", "k=1\r\nk=2\r\nj=\\\r\n  x\r\n", map[string]string{"k": "2", "j": "x"}},
		{"surrogate pair is one character", "s=\\uD83D\\uDE00\n", map[string]string{"s": "😀"}},
		{"trailing backslash at EOF", "k=v\\", map[string]string{"k": "v"}},
		{"even backslashes do not continue", "k=v\\\\\nj=w\n", map[string]string{"k": `v\`, "j": "w"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Map([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseKeepsByteRanges(t *testing.T) {
	in := "# head\na=1\nb=2\\\n  3\n"
	entries, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, in[e.Start:e.End])
	}
	if d := cmp.Diff([]string{"a=1\n", "b=2\\\n  3\n"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestMalformedUnicodeEscape(t *testing.T) {
	_, err := Parse([]byte("ok=1\nbad=\\u12\n"))
	if !errors.Is(err, ErrMalformedU) {
		t.Fatalf("err = %v, want ErrMalformedU", err)
	}
	if got := err.Error(); got[:7] != "line 2:" {
		t.Errorf("error %q does not name line 2", got)
	}
}
