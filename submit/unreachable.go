package submit

import (
	"fmt"
	"strings"

	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/redact"
)

// maxAppScanSize bounds the Python app read for its SparkSession calls.
const maxAppScanSize = 16 << 20

// Packages set where a rewrite cannot reach: the PYSPARK_SUBMIT_ARGS and
// SPARK_SUBMIT_OPTS environment variables, and a Python app's own
// SparkSession.builder.config(...) / SparkConf().set(...) calls. rewrite.Apply
// and rewrite.Manifest warn about them, with the fix.

// resolvingKeys are the conf keys whose presence in a runtime source is
// worth a warning (spark.jars.ivy alone resolves nothing).
var resolvingKeys = map[string]string{
	"spark.jars.packages":     "--packages",
	"spark.jars.repositories": "--repositories",
	"spark.jars.excludes":     "--exclude-packages",
}

// EnvPackages reports what the environment variable name=value sets that
// makes Spark resolve ("--packages g:a:v"), or "". It understands
// PYSPARK_SUBMIT_ARGS (spark-submit arguments, shell-split as pyspark's
// launch_gateway does) and SPARK_SUBMIT_OPTS (JVM options:
// -Dspark.jars.packages=…). The result is redacted.
func EnvPackages(name, value string) string {
	return strings.Join(envPackages(name, value), " ")
}

// envPackages is EnvPackages, one finding ("--packages g:a:v",
// "-Dspark.jars.packages=…", "spark.jars.packages=…") a string, each
// redacted.
func envPackages(name, value string) []string {
	var found []string
	switch name {
	case "PYSPARK_SUBMIT_ARGS":
		toks := shellSplit(value)
		for i := 0; i < len(toks); i++ {
			t := toks[i]
			next := ""
			if i+1 < len(toks) {
				next = toks[i+1]
			}
			n, v, eq := splitEqOpt(t)
			switch {
			case n == "--packages" || n == "--repositories" || n == "--exclude-packages":
				if !eq {
					v, i = next, i+1
				}
				found = append(found, n+" "+v)
			case n == "--conf" || n == "-c":
				if !eq {
					v, i = next, i+1
				}
				if k, kv, ok := strings.Cut(v, "="); ok && resolvingKeys[k] != "" {
					found = append(found, k+"="+kv)
				}
			case submitValueOpts[n] != "":
				if !eq {
					i++ // its value
				}
			case !strings.HasPrefix(t, "-"):
				// The primary resource (pyspark-shell): the rest are app args.
				i = len(toks)
			}
		}
	case "SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS":
		for _, t := range shellSplit(value) {
			if k, v, ok := strings.Cut(strings.TrimPrefix(t, "-D"), "="); ok && strings.HasPrefix(t, "-D") && resolvingKeys[k] != "" {
				found = append(found, t[:2]+k+"="+v)
			}
		}
	}
	for i, f := range found {
		found[i] = redact.String(f)
	}
	return found
}

// shellSplit splits s into words as a POSIX shell would (quotes and
// backslashes; no expansions).
func shellSplit(s string) []string {
	var out []string
	var b strings.Builder
	in := false
	var quote rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				b.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[i+1]):
				i++
				b.WriteRune(rs[i])
			default:
				b.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			b.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// UnreachableWarnings returns the warnings about packages set where the
// rewritten argv cannot reach: the environment, and the Python app itself
// when its primary resource is a local .py file.
func UnreachableWarnings(getenv func(string) string, a *Argv) []string {
	var out []string
	for _, env := range []string{"PYSPARK_SUBMIT_ARGS", "SPARK_SUBMIT_OPTS"} {
		if f := envPackages(env, getenv(env)); len(f) > 0 {
			out = append(out, fmt.Sprintf("$%s sets %s, which this rewrite cannot remove: drop it from $%s and give it to prebake instead (prebake rewrite %s -- …)", env, strings.Join(f, " "), env, prebakeFlags(f)))
		}
	}
	if !a.IsPython() || a.Primary == ResourcePySparkShell {
		return out
	}
	p := a.Primary
	if strings.Contains(p, "://") && !strings.HasPrefix(p, "file://") {
		return out
	}
	p = strings.TrimPrefix(strings.TrimPrefix(p, "file://"), "file:")
	// A warning only: a file that is not a regular one of a sane size is
	// not read (a FIFO would hang the rewrite).
	data, err := localfile.Read(p, maxAppScanSize)
	if err != nil {
		return out
	}
	return append(out, pyAppWarnings(a.Primary, data)...)
}

// prebakeFlags turns findings of envPackages ("--packages X",
// "spark.jars.packages=X", "-Dspark.jars.packages=X") into prebake's
// resolution flags, shell-quoted: the values come from the environment.
func prebakeFlags(found []string) string {
	var out []string
	for _, f := range found {
		if k, v, ok := strings.Cut(strings.TrimPrefix(f, "-D"), "="); ok && resolvingKeys[k] != "" {
			out = append(out, resolvingKeys[k], v)
			continue
		}
		flag, v, _ := strings.Cut(f, " ")
		out = append(out, flag, v)
	}
	return ShellQuote(out)
}

// pyAppWarnings warns about each packages key a Python app sets itself.
func pyAppWarnings(name string, src []byte) []string {
	var out []string
	for _, f := range pyConfigPackages(src) {
		fix := "remove it from the app"
		if f.Flag != "" {
			switch {
			case f.Literal && f.Key == "PYSPARK_SUBMIT_ARGS": // Flag holds the flags and their values
				fix += fmt.Sprintf(" and give it to prebake instead (prebake rewrite %s -- …)", f.Flag)
			case f.Literal:
				fix += fmt.Sprintf(" and give it to prebake instead (prebake rewrite %s -- …)", ShellQuote([]string{f.Flag, redact.String(f.Value)}))
			default:
				fix += fmt.Sprintf(" and give its value to prebake as %s", f.Flag)
			}
		}
		what := f.Key
		if f.Literal {
			what += "=" + redact.String(f.Value)
		} else if f.Key == "PYSPARK_SUBMIT_ARGS" {
			what += " (computed)"
		} else {
			what += " (a computed value)"
		}
		out = append(out, fmt.Sprintf("%s line %d sets %s in %s: when the app starts its own JVM, Spark resolves it at run time, which this rewrite cannot remove; %s", name, f.Line, what, f.Via, fix))
	}
	return out
}

// A pyFinding is a packages setting in Python source.
type pyFinding struct {
	Line    int
	Key     string // spark.jars.packages, … or PYSPARK_SUBMIT_ARGS
	Value   string // the value when Literal (for PYSPARK_SUBMIT_ARGS: what it sets)
	Literal bool
	Via     string // ".config(...)", ".set(...)", "os.environ"
	Flag    string // the prebake flag that replaces it ("--packages"), or "" (for PYSPARK_SUBMIT_ARGS: the flags and values, shell-quoted)
}

type pyTokKind int

const (
	pyName pyTokKind = iota
	pyString
	pyOp
)

type pyTok struct {
	kind  pyTokKind
	text  string // the name, the operator, or the string's value
	fstr  bool   // an f-string: not a literal value
	line  int
	count int // adjacent string literals merged into this one
}

// pyTokenize splits Python source into names, string literals (decoded,
// adjacent ones concatenated) and operators, skipping comments. It is
// forgiving: unterminated strings end at the end of the input.
func pyTokenize(src []byte) []pyTok {
	s := string(src)
	var toks []pyTok
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
		case isPyIdentStart(c):
			j := i
			for j < len(s) && isPyIdent(s[j]) {
				j++
			}
			word := s[i:j]
			if j < len(s) && (s[j] == '\'' || s[j] == '"') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbuf") == "" {
				t, n, lines := pyReadString(s[j:], strings.ContainsAny(word, "rR"))
				t.fstr = strings.ContainsAny(word, "fF")
				t.line = line
				toks = appendPyString(toks, t)
				line += lines
				i = j + n
				continue
			}
			toks = append(toks, pyTok{kind: pyName, text: word, line: line})
			i = j
		case c == '\'' || c == '"':
			t, n, lines := pyReadString(s[i:], false)
			t.line = line
			toks = appendPyString(toks, t)
			line += lines
			i += n
		default:
			op := string(c)
			if i+1 < len(s) && s[i+1] == '=' && strings.IndexByte("=!<>:+-*/%&|^", c) >= 0 {
				op += "="
			}
			toks = append(toks, pyTok{kind: pyOp, text: op, line: line})
			i += len(op)
		}
	}
	return toks
}

func appendPyString(toks []pyTok, t pyTok) []pyTok {
	if n := len(toks); n > 0 && toks[n-1].kind == pyString {
		toks[n-1].text += t.text
		toks[n-1].fstr = toks[n-1].fstr || t.fstr
		toks[n-1].count++
		return toks
	}
	return append(toks, t)
}

func isPyIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isPyIdent(c byte) bool { return isPyIdentStart(c) || c >= '0' && c <= '9' }

// pyReadString reads the string literal at the start of s (a quote), returning
// it, the bytes read and the newlines inside.
func pyReadString(s string, raw bool) (pyTok, int, int) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	var b strings.Builder
	lines := 0
	i := len(q)
	for i < len(s) {
		if strings.HasPrefix(s[i:], q) {
			return pyTok{kind: pyString, text: b.String()}, i + len(q), lines
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
	return pyTok{kind: pyString, text: b.String()}, i, lines
}

// pyConfigPackages finds where Python source sets packages itself:
//
//   - .config("spark.jars.packages", v), .config(key="spark.jars.packages",
//     value=v), .config(map={"spark.jars.packages": v}) (SparkSession.builder),
//     .set / .setIfMissing / .setAll([(k, v)]) (SparkConf);
//   - os.environ["PYSPARK_SUBMIT_ARGS"] = "--packages …",
//     os.environ.setdefault("PYSPARK_SUBMIT_ARGS", …), os.putenv(…) and
//     dicts {"PYSPARK_SUBMIT_ARGS": …}.
//
// Comments, docstrings and other strings that merely mention a key are not
// findings.
func pyConfigPackages(src []byte) []pyFinding {
	toks := pyTokenize(src)
	var out []pyFinding
	for i := 0; i+2 < len(toks); i++ {
		t := toks[i]
		// os.environ / putenv / dicts: "PYSPARK_SUBMIT_ARGS" followed by
		// "] =", "," or ":" and a value.
		if t.kind == pyString && t.count == 0 && t.text == "PYSPARK_SUBMIT_ARGS" {
			j := i + 1
			if isOp(toks[j], "]") && j+1 < len(toks) && isOp(toks[j+1], "=") {
				j += 2
			} else if isOp(toks[j], ",", ":") {
				j++
			} else {
				continue
			}
			if j >= len(toks) {
				continue
			}
			v := toks[j]
			if v.kind == pyString && !v.fstr {
				if f := envPackages("PYSPARK_SUBMIT_ARGS", v.text); len(f) > 0 {
					out = append(out, pyFinding{Line: t.line, Key: "PYSPARK_SUBMIT_ARGS", Value: strings.Join(f, " "), Literal: true, Via: "os.environ", Flag: prebakeFlags(f)})
				}
			} else if pyValueMentions(toks[j:], "--packages", "spark.jars.packages") {
				out = append(out, pyFinding{Line: t.line, Key: "PYSPARK_SUBMIT_ARGS", Via: "os.environ", Flag: "--packages"})
			}
			continue
		}
		if !isOp(t, ".") || toks[i+1].kind != pyName || !isOp(toks[i+2], "(") {
			continue
		}
		method := toks[i+1].text
		switch method {
		case "config", "set", "setIfMissing", "setAll":
		default:
			continue
		}
		args, end := pyCallArgs(toks, i+2)
		via := "." + method + "(...)"
		if method == "setAll" || method == "config" && (pyKeyword(args, "map") != nil || len(args) > 0 && len(args[0]) > 0 && isOp(args[0][0], "{")) {
			out = append(out, pyPairs(toks[i+3:end], via)...)
		} else {
			key := pyPositional(args, 0)
			if kw := pyKeyword(args, "key"); kw != nil {
				key = kw
			}
			val := pyPositional(args, 1)
			if kw := pyKeyword(args, "value"); kw != nil {
				val = kw
			}
			if f, ok := pyFindingFor(key, val, via); ok {
				out = append(out, f)
			}
		}
		i = end - 1
	}
	return out
}

func pyFindingFor(key, val []pyTok, via string) (pyFinding, bool) {
	if len(key) != 1 || key[0].kind != pyString || key[0].fstr || resolvingKeys[key[0].text] == "" {
		return pyFinding{}, false
	}
	f := pyFinding{Line: key[0].line, Key: key[0].text, Via: via, Flag: resolvingKeys[key[0].text]}
	if len(val) == 1 && val[0].kind == pyString && !val[0].fstr {
		f.Value, f.Literal = val[0].text, true
	}
	return f, true
}

// pyPairs finds "key": value and ("key", value) pairs of packages keys.
func pyPairs(toks []pyTok, via string) []pyFinding {
	var out []pyFinding
	for j := 0; j+2 < len(toks); j++ {
		if toks[j].kind != pyString || !isOp(toks[j+1], ":", ",") {
			continue
		}
		k := j + 2
		depth := 0
		for ; k < len(toks); k++ {
			if toks[k].kind != pyOp {
				continue
			}
			switch toks[k].text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ",":
				if depth == 0 {
					depth = -1
				}
			}
			if depth < 0 {
				break
			}
		}
		if f, ok := pyFindingFor(toks[j:j+1], toks[j+2:k], via); ok {
			out = append(out, f)
			j = k - 1
		}
	}
	return out
}

// pyCallArgs splits the arguments of the call whose "(" is toks[open] at
// top-level commas; end is the index after the matching ")".
func pyCallArgs(toks []pyTok, open int) (args [][]pyTok, end int) {
	depth := 0
	var cur []pyTok
	for i := open; i < len(toks); i++ {
		t := toks[i]
		if t.kind != pyOp {
			cur = append(cur, t)
			continue
		}
		switch t.text {
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

// pyPositional returns the n-th positional argument.
func pyPositional(args [][]pyTok, n int) []pyTok {
	for _, a := range args {
		if len(a) >= 2 && a[0].kind == pyName && isOp(a[1], "=") {
			continue
		}
		if n == 0 {
			return a
		}
		n--
	}
	return nil
}

// pyKeyword returns the value of keyword argument name.
func pyKeyword(args [][]pyTok, name string) []pyTok {
	for _, a := range args {
		if len(a) >= 2 && a[0].kind == pyName && a[0].text == name && isOp(a[1], "=") {
			return a[2:]
		}
	}
	return nil
}

// pyValueMentions reports whether the expression starting at toks (up to
// the end of the statement's line) has a string mentioning one of subs.
func pyValueMentions(toks []pyTok, subs ...string) bool {
	if len(toks) == 0 {
		return false
	}
	line := toks[0].line
	for _, t := range toks {
		if t.line != line {
			return false
		}
		if t.kind == pyString {
			for _, s := range subs {
				if strings.Contains(t.text, s) {
					return true
				}
			}
		}
	}
	return false
}

func isOp(t pyTok, ops ...string) bool {
	if t.kind != pyOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}
