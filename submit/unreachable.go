package submit

import (
	"fmt"
	"strings"

	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/pyscan"
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
	// (the program a run executes: python3 app.py).
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
	toks := pyscan.Tokenize(src)
	var out []pyFinding
	for i := 0; i+2 < len(toks); i++ {
		t := toks[i]
		// Delta Lake's pip helper: configure_spark_with_delta_pip(builder,
		// extra_packages=None) sets spark.jars.packages to
		// io.delta:delta-spark_2.12:<delta-spark's pip version> (delta-spark
		// 4.x: _2.13) and the extra packages.
		if t.Kind == pyscan.Name && t.Text == "configure_spark_with_delta_pip" && pyscan.IsOp(toks[i+1], "(") && (i == 0 || toks[i-1].Kind != pyscan.Name || toks[i-1].Text != "def") {
			args, end := pyscan.CallArgs(toks, i+1)
			extra := pyscan.Keyword(args, "extra_packages")
			if extra == nil {
				extra = pyscan.Positional(args, 1)
			}
			f := pyFinding{Line: t.Line, Key: "spark.jars.packages", Via: "configure_spark_with_delta_pip(...)", Flag: "--packages", Delta: true,
				Value: "io.delta:delta-spark_2.12:VERSION"}
			if lits, ok := pyscan.StringList(extra); ok && len(lits) > 0 {
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
		if t.Kind == pyscan.String && t.Count == 0 && t.Text == "PYSPARK_SUBMIT_ARGS" {
			j := i + 1
			if pyscan.IsOp(toks[j], "]") && j+1 < len(toks) && pyscan.IsOp(toks[j+1], "=") {
				j += 2
			} else if pyscan.IsOp(toks[j], ",", ":") {
				j++
			} else {
				continue
			}
			if j >= len(toks) {
				continue
			}
			v := toks[j]
			if v.Kind == pyscan.String && !v.FString {
				if f := envPackages("PYSPARK_SUBMIT_ARGS", v.Text); len(f) > 0 {
					out = append(out, pyFinding{Line: t.Line, Key: "PYSPARK_SUBMIT_ARGS", Value: strings.Join(f, " "), Literal: true, Via: "os.environ", Flag: prebakeFlags(f)})
				}
			} else if pyscan.ValueMentions(toks[j:], "--packages", "spark.jars.packages") {
				out = append(out, pyFinding{Line: t.Line, Key: "PYSPARK_SUBMIT_ARGS", Via: "os.environ", Flag: "--packages"})
			}
			continue
		}
		if !pyscan.IsOp(t, ".") || toks[i+1].Kind != pyscan.Name || !pyscan.IsOp(toks[i+2], "(") {
			continue
		}
		method := toks[i+1].Text
		switch method {
		case "config", "set", "setIfMissing", "setAll":
		default:
			continue
		}
		args, end := pyscan.CallArgs(toks, i+2)
		via := "." + method + "(...)"
		if method == "setAll" || method == "config" && (pyscan.Keyword(args, "map") != nil || len(args) > 0 && len(args[0]) > 0 && pyscan.IsOp(args[0][0], "{")) {
			out = append(out, pyPairs(toks[i+3:end], via)...)
		} else {
			key := pyscan.Positional(args, 0)
			if kw := pyscan.Keyword(args, "key"); kw != nil {
				key = kw
			}
			val := pyscan.Positional(args, 1)
			if kw := pyscan.Keyword(args, "value"); kw != nil {
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

func pyFindingFor(key, val []pyscan.Token, via string) (pyFinding, bool) {
	if len(key) != 1 || key[0].Kind != pyscan.String || key[0].FString || resolvingKeys[key[0].Text] == "" {
		return pyFinding{}, false
	}
	f := pyFinding{Line: key[0].Line, Key: key[0].Text, Via: via, Flag: resolvingKeys[key[0].Text]}
	if len(val) == 1 && val[0].Kind == pyscan.String && !val[0].FString {
		f.Value, f.Literal = val[0].Text, true
	}
	return f, true
}

// pyPairs finds "key": value and ("key", value) pairs of packages keys.
func pyPairs(toks []pyscan.Token, via string) []pyFinding {
	var out []pyFinding
	for j := 0; j+2 < len(toks); j++ {
		if toks[j].Kind != pyscan.String || !pyscan.IsOp(toks[j+1], ":", ",") {
			continue
		}
		k := j + 2
		depth := 0
		for ; k < len(toks); k++ {
			if toks[k].Kind != pyscan.Op {
				continue
			}
			switch toks[k].Text {
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
