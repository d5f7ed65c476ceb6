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
	case EnvPySparkSubmitArgs:
		toks, err := ShlexSplit(value)
		if err != nil {
			toks = shellSplit(value)
		}
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

// AppFix is what a rewrite did, for the fix its warnings about a Python
// app's own packages settings give.
type AppFix struct {
	// Apps are more Python files to scan, besides a .py primary resource
	// (the program of submit --exec: python3 app.py).
	Apps []string
	// Packages are the coordinates the rewrite resolved (comma-separated).
	Packages string
	// Jars is the one jar list the rewrite set (the --jars/spark.jars
	// value), "" when it set none.
	Jars string
}

// UnreachableWarnings returns the warnings about packages set where the
// rewritten argv cannot reach: the environment, and the Python app itself
// (a local .py primary resource and fix.Apps), each naming file:line, what
// to change there and, when the rewrite resolved those coordinates, the
// jar list that holds them.
func UnreachableWarnings(getenv func(string) string, a *Argv, fix AppFix) []string {
	var out []string
	for _, env := range []string{EnvPySparkSubmitArgs, "SPARK_SUBMIT_OPTS"} {
		if f := envPackages(env, getenv(env)); len(f) > 0 {
			out = append(out, fmt.Sprintf("$%s sets %s, which this rewrite cannot remove: drop it from $%s and give it to prebake instead (prebake rewrite %s -- …)", env, strings.Join(f, " "), env, prebakeFlags(f)))
		}
	}
	var apps []string
	if p := a.Primary; a.IsPython() && p != ResourcePySparkShell && (!strings.Contains(p, "://") || strings.HasPrefix(p, "file://")) {
		apps = append(apps, p)
	}
	for _, p := range append(apps, fix.Apps...) {
		path := strings.TrimPrefix(strings.TrimPrefix(p, "file://"), "file:")
		// A warning only: a file that is not a regular one of a sane size is
		// not read (a FIFO would hang the rewrite).
		data, err := localfile.Read(path, maxAppScanSize)
		if err != nil {
			continue
		}
		out = append(out, pyAppWarnings(p, data, fix)...)
	}
	return out
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

// covered reports whether every coordinate of list (comma-separated) is
// among the resolved ones (g:a:v, or g:a with any version for want ending
// in ":*").
func covered(list, resolved string) bool {
	have := map[string]bool{}
	for _, c := range strings.Split(resolved, ",") {
		if c = strings.TrimSpace(c); c != "" {
			have[c] = true
			if i := strings.LastIndexByte(c, ':'); i > 0 {
				have[c[:i]+":*"] = true
			}
		}
	}
	n := 0
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if !have[c] {
			return false
		}
		n++
	}
	return n > 0
}

// deltaCovered returns the resolved delta-spark (or delta-core)
// coordinate when resolved has one and every extra package (comma-separated)
// too, else "".
func deltaCovered(extras, resolved string) string {
	if extras != "" && !covered(extras, resolved) {
		return ""
	}
	for _, c := range strings.Split(resolved, ",") {
		c = strings.TrimSpace(c)
		if strings.HasPrefix(c, "io.delta:delta-spark_") || strings.HasPrefix(c, "io.delta:delta-core_") {
			return c
		}
	}
	return ""
}

// pyAppWarnings warns about each packages key a Python app sets itself:
// name:line, what it sets, and what to change the line to.
func pyAppWarnings(name string, src []byte, fix AppFix) []string {
	var out []string
	for _, f := range pyConfigPackages(src) {
		what := f.Key
		switch {
		case f.Delta:
			what = "spark.jars.packages=" + redact.String(f.Value)
		case f.Literal:
			what += "=" + redact.String(f.Value)
		case f.Key == EnvPySparkSubmitArgs:
			what += " (computed)"
		default:
			what += " (a computed value)"
		}
		var fix1 string
		switch {
		case f.Delta && fix.Jars != "" && deltaCovered(f.Check, fix.Packages) != "":
			fix1 = fmt.Sprintf("build the session from the builder it wraps (drop the helper): the rewritten jar list already holds %s (--jars/spark.jars %s)", deltaCovered(f.Check, fix.Packages), redact.String(fix.Jars))
		case f.Delta:
			fix1 = fmt.Sprintf("build the session from the builder it wraps (drop the helper) and give prebake the packages instead (prebake rewrite %s -- …; VERSION is `pip show delta-spark`'s)", ShellQuote([]string{"--packages", redact.String(f.Value)}))
		case f.Literal && f.Key == "spark.jars.packages" && fix.Jars != "" && covered(f.Value, fix.Packages):
			fix1 = fmt.Sprintf("delete that setting: the rewritten jar list already holds its jars; where the app runs without prebake, set .config(\"spark.jars\", %q) there instead", redact.String(fix.Jars))
		case f.Literal && f.Key == EnvPySparkSubmitArgs: // Flag holds the flags and their values
			fix1 = fmt.Sprintf("delete that setting and give it to prebake instead (prebake rewrite %s -- …)", f.Flag)
		case f.Literal:
			fix1 = fmt.Sprintf("delete that setting and give it to prebake instead (prebake rewrite %s -- …)", ShellQuote([]string{f.Flag, redact.String(f.Value)}))
		case f.Flag != "":
			fix1 = fmt.Sprintf("delete that setting and give its value to prebake as %s", f.Flag)
		default:
			fix1 = "delete that setting"
		}
		out = append(out, fmt.Sprintf("%s:%d: %s sets %s, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); %s", name, f.Line, f.Via, what, fix1))
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
	// Delta is set for Delta Lake's configure_spark_with_delta_pip(builder,
	// extra_packages=[…]): Value is what it sets (the delta-spark
	// coordinate with VERSION for the pip package's version, then the
	// extra packages) and Check the literal extra packages alone, to
	// match a resolved set.
	Delta bool
	Check string
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
		// Delta Lake's pip helper: configure_spark_with_delta_pip(builder,
		// extra_packages=None) sets spark.jars.packages to
		// io.delta:delta-spark_2.12:<delta-spark's pip version> (delta-spark
		// 4.x: _2.13) and the extra packages.
		if t.kind == pyName && t.text == "configure_spark_with_delta_pip" && isOp(toks[i+1], "(") && (i == 0 || toks[i-1].kind != pyName || toks[i-1].text != "def") {
			args, end := pyCallArgs(toks, i+1)
			extra := pyKeyword(args, "extra_packages")
			if extra == nil {
				extra = pyPositional(args, 1)
			}
			f := pyFinding{Line: t.line, Key: "spark.jars.packages", Via: "configure_spark_with_delta_pip(...)", Flag: "--packages", Delta: true,
				Value: "io.delta:delta-spark_2.12:VERSION"}
			if lits, ok := pyStringList(extra); ok && len(lits) > 0 {
				f.Check = strings.Join(lits, ",")
				f.Value += "," + f.Check
			} else if !ok {
				f.Value += ",<extra_packages>"
				f.Check = "<computed>"
			}
			out = append(out, f)
			i = end - 1
			continue
		}
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

// pyStringList returns the strings of a list or tuple literal of string
// literals ([] and None give none); ok is false for anything else.
func pyStringList(toks []pyTok) ([]string, bool) {
	if len(toks) == 0 || len(toks) == 1 && toks[0].kind == pyName && toks[0].text == "None" {
		return nil, true
	}
	if len(toks) < 2 || !isOp(toks[0], "[", "(") || !isOp(toks[len(toks)-1], "]", ")") {
		return nil, false
	}
	var out []string
	for j, t := range toks[1 : len(toks)-1] {
		switch {
		case j%2 == 0 && t.kind == pyString && !t.fstr:
			out = append(out, t.text)
		case j%2 == 1 && isOp(t, ","):
		default:
			return nil, false
		}
	}
	return out, true
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
