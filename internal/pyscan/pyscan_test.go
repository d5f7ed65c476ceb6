package pyscan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []Token
	}{
		{"call", `s.config("a", 'b')`, []Token{
			{Kind: Name, Text: "s", Line: 1}, {Kind: Op, Text: ".", Line: 1}, {Kind: Name, Text: "config", Line: 1},
			{Kind: Op, Text: "(", Line: 1}, {Kind: String, Text: "a", Line: 1}, {Kind: Op, Text: ",", Line: 1},
			{Kind: String, Text: "b", Line: 1}, {Kind: Op, Text: ")", Line: 1}}},
		{"comment and lines", "# x = 'no'\nx == y", []Token{
			{Kind: Name, Text: "x", Line: 2}, {Kind: Op, Text: "==", Line: 2}, {Kind: Name, Text: "y", Line: 2}}},
		{"adjacent strings merge", `"a" 'b'`, []Token{{Kind: String, Text: "ab", Line: 1, Count: 1}}},
		{"prefixes", `f"x{y}" rb'\n'`, []Token{{Kind: String, Text: `x{y}\n`, FString: true, Line: 1, Count: 1}}},
		{"escapes", `"a\tb\"c"`, []Token{{Kind: String, Text: "a\tb\"c", Line: 1}}},
		{"triple quoted spans lines", "'''a\nb'''\nz", []Token{{Kind: String, Text: "a\nb", Line: 1}, {Kind: Name, Text: "z", Line: 3}}},
		{"unterminated", `x = "abc`, []Token{{Kind: Name, Text: "x", Line: 1}, {Kind: Op, Text: "=", Line: 1}, {Kind: String, Text: "abc", Line: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Tokenize([]byte(tc.src))); d != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", tc.src, d)
			}
		})
	}
}

func TestCallArgs(t *testing.T) {
	toks := Tokenize([]byte(`f(1, key="k", value=[a, (b, c)]) + 2`))
	args, end := CallArgs(toks, 1)
	if len(args) != 3 {
		t.Fatalf("CallArgs: %d args, want 3: %v", len(args), args)
	}
	if got := Positional(args, 0); len(got) != 1 || got[0].Text != "1" {
		t.Errorf("Positional(0) = %v", got)
	}
	if got := Keyword(args, "key"); len(got) != 1 || got[0].Text != "k" {
		t.Errorf(`Keyword("key") = %v`, got)
	}
	if got := Positional(args, 1); got != nil {
		t.Errorf("Positional(1) = %v, want none (the others are keywords)", got)
	}
	if !IsOp(toks[end], "+") {
		t.Errorf("end = %d (%v), want the index of +", end, toks[end])
	}
	if l, ok := StringList(Tokenize([]byte(`["a", "b"]`))); !ok || !cmp.Equal(l, []string{"a", "b"}) {
		t.Errorf("StringList = %v, %v", l, ok)
	}
	if _, ok := StringList(Tokenize([]byte(`[a]`))); ok {
		t.Error("StringList([a]) ok, want not a literal list")
	}
}

// FuzzTokenize: any input tokenizes without panicking, and lines only grow.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{`x("a")`, "'''", `"\`, "f'{'", "\\\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		last := 1
		for _, tok := range Tokenize(src) {
			if tok.Line < last {
				t.Fatalf("line %d after %d", tok.Line, last)
			}
			last = tok.Line
		}
		toks := Tokenize(src)
		for i := range toks {
			if IsOp(toks[i], "(") {
				if _, end := CallArgs(toks, i); end < i || end > len(toks) {
					t.Fatalf("CallArgs end %d out of [%d,%d]", end, i, len(toks))
				}
			}
		}
	})
}
