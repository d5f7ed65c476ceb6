// Package pyscan is a small, forgiving Python tokenizer and the call-argument
// helpers prebake needs to find where a Python app sets Spark conf itself
// (SparkSession.builder.config(...), SparkConf().set(...), os.environ).
// It reads only: no Python runs. Unterminated strings end at the end of the
// input, so hostile or broken source yields tokens, never an error.
package pyscan

import "strings"

// Kind is a token's kind.
type Kind int

// The token kinds.
const (
	Name Kind = iota
	String
	Op
)

// A Token is a name, an operator or a (decoded) string literal.
type Token struct {
	Kind    Kind
	Text    string // the name, the operator, or the string's value
	FString bool   // an f-string: not a literal value
	Line    int
	Count   int // adjacent string literals merged into this one
}

// Tokenize splits Python source into names, string literals (decoded,
// adjacent ones concatenated) and operators, skipping comments. It is
// forgiving: unterminated strings end at the end of the input.
func Tokenize(src []byte) []Token {
	s := string(src)
	var toks []Token
	line := 1
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\\':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			word := s[i:j]
			if j < len(s) && (s[j] == '\'' || s[j] == '"') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbuf") == "" {
				t, n, lines := readString(s[j:], strings.ContainsAny(word, "rR"))
				t.FString = strings.ContainsAny(word, "fF")
				t.Line = line
				toks = appendString(toks, t)
				line += lines
				i = j + n
				continue
			}
			toks = append(toks, Token{Kind: Name, Text: word, Line: line})
			i = j
		case c == '\'' || c == '"':
			t, n, lines := readString(s[i:], false)
			t.Line = line
			toks = appendString(toks, t)
			line += lines
			i += n
		default:
			op := string(c)
			if i+1 < len(s) && s[i+1] == '=' && strings.IndexByte("=!<>:+-*/%&|^", c) >= 0 {
				op += "="
			}
			toks = append(toks, Token{Kind: Op, Text: op, Line: line})
			i += len(op)
		}
	}
	return toks
}

func appendString(toks []Token, t Token) []Token {
	if n := len(toks); n > 0 && toks[n-1].Kind == String {
		toks[n-1].Text += t.Text
		toks[n-1].FString = toks[n-1].FString || t.FString
		toks[n-1].Count++
		return toks
	}
	return append(toks, t)
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// readString reads the string literal at the start of s (a quote), returning
// it, the bytes read and the newlines inside.
func readString(s string, raw bool) (Token, int, int) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	var b strings.Builder
	lines := 0
	i := len(q)
	for i < len(s) {
		if strings.HasPrefix(s[i:], q) {
			return Token{Kind: String, Text: b.String()}, i + len(q), lines
		}
		c := s[i]
		if c == '\n' {
			lines++
			if len(q) == 1 {
				break // unterminated single-quoted string
			}
		}
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if n == '\n' {
				lines++
			}
			if raw {
				b.WriteByte(c)
				b.WriteByte(n)
			} else {
				switch n {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\n':
				default:
					b.WriteByte(n)
				}
			}
			i += 2
			continue
		}
		b.WriteByte(c)
		i++
	}
	return Token{Kind: String, Text: b.String()}, i, lines
}

// StringList returns the strings of a list or tuple literal of string
// literals ([] and None give none); ok is false for anything else.
func StringList(toks []Token) ([]string, bool) {
	if len(toks) == 0 || len(toks) == 1 && toks[0].Kind == Name && toks[0].Text == "None" {
		return nil, true
	}
	if len(toks) < 2 || !IsOp(toks[0], "[", "(") || !IsOp(toks[len(toks)-1], "]", ")") {
		return nil, false
	}
	var out []string
	for j, t := range toks[1 : len(toks)-1] {
		switch {
		case j%2 == 0 && t.Kind == String && !t.FString:
			out = append(out, t.Text)
		case j%2 == 1 && IsOp(t, ","):
		default:
			return nil, false
		}
	}
	return out, true
}

// CallArgs splits the arguments of the call whose "(" is toks[open] at
// top-level commas; end is the index after the matching ")".
func CallArgs(toks []Token, open int) (args [][]Token, end int) {
	depth := 0
	var cur []Token
	for i := open; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != Op {
			cur = append(cur, t)
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			depth++
			if depth == 1 {
				continue
			}
		case ")", "]", "}":
			depth--
			if depth == 0 {
				if len(cur) > 0 {
					args = append(args, cur)
				}
				return args, i + 1
			}
		case ",":
			if depth == 1 {
				args = append(args, cur)
				cur = nil
				continue
			}
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		args = append(args, cur)
	}
	return args, len(toks)
}

// Positional returns the n-th positional argument.
func Positional(args [][]Token, n int) []Token {
	for _, a := range args {
		if len(a) >= 2 && a[0].Kind == Name && IsOp(a[1], "=") {
			continue
		}
		if n == 0 {
			return a
		}
		n--
	}
	return nil
}

// Keyword returns the value of keyword argument name.
func Keyword(args [][]Token, name string) []Token {
	for _, a := range args {
		if len(a) >= 2 && a[0].Kind == Name && a[0].Text == name && IsOp(a[1], "=") {
			return a[2:]
		}
	}
	return nil
}

// ValueMentions reports whether the expression starting at toks (up to
// the end of the statement's line) has a string mentioning one of subs.
func ValueMentions(toks []Token, subs ...string) bool {
	if len(toks) == 0 {
		return false
	}
	line := toks[0].Line
	for _, t := range toks {
		if t.Line != line {
			return false
		}
		if t.Kind == String {
			for _, s := range subs {
				if strings.Contains(t.Text, s) {
					return true
				}
			}
		}
	}
	return false
}

// IsOp reports whether t is one of the operators ops.
func IsOp(t Token, ops ...string) bool {
	if t.Kind != Op {
		return false
	}
	for _, o := range ops {
		if t.Text == o {
			return true
		}
	}
	return false
}
