package submit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// EnvPySparkSubmitArgs is the variable a Python process that starts its own
// JVM (python3 app.py, a notebook kernel) reads its spark-submit arguments
// from: pyspark's java_gateway.launch_gateway runs
// $SPARK_HOME/bin/spark-submit with the SparkConf's pairs as --conf, then
// shlex.split($PYSPARK_SUBMIT_ARGS) (default "pyspark-shell").
const EnvPySparkSubmitArgs = "PYSPARK_SUBMIT_ARGS"

// pysparkDefaultArgs is launch_gateway's default for an unset
// PYSPARK_SUBMIT_ARGS.
const pysparkDefaultArgs = ResourcePySparkShell

// ShlexSplit splits s exactly as Python's shlex.split(s) does (POSIX mode,
// no comments): whitespace is space, tab, CR and LF; single quotes take
// everything literally; in double quotes a backslash escapes only '"' and
// '\'; outside quotes a backslash escapes any character. An unterminated
// quote or a trailing backslash is an error, as shlex raises ValueError
// ("No closing quotation", "No escaped character").
func ShlexSplit(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	inWord := false // a token is open (it may be empty: '')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		case '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("no escaped character at the end")
			}
			i++
			b.WriteByte(s[i])
			inWord = true
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("no closing quotation")
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("no closing quotation")
			}
			inWord = true
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out, nil
}

// PySparkArgs returns the spark-submit arguments a Python process started
// with the environment getenv passes to spark-submit: $PYSPARK_SUBMIT_ARGS
// split as shlex does, or pyspark's default (pyspark-shell) when it is
// unset or empty. They must end in the pyspark-shell primary resource and
// must not ask for cluster deploy mode (Spark refuses both for shells); a
// value shlex cannot split is an errdefs.BadArgument, as pyspark fails on it.
func PySparkArgs(getenv func(string) string) ([]string, error) {
	v := getenv(EnvPySparkSubmitArgs)
	if strings.TrimSpace(v) == "" {
		v = pysparkDefaultArgs
	}
	toks, err := ShlexSplit(v)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "$%s %q: %v (pyspark splits it with shlex and fails the same way)", EnvPySparkSubmitArgs, redact.String(v), err)
	}
	a, err := ParseArgv(toks)
	if err != nil {
		return nil, err
	}
	if a.Action != ActionSubmit || a.Primary != ResourcePySparkShell {
		return nil, errdefs.Errorf(errdefs.BadArgument, "$%s %q: it must end with pyspark-shell, the primary resource pyspark's JVM is started with (see minrk/findspark#28); got %q",
			EnvPySparkSubmitArgs, redact.String(v), redact.String(a.Primary))
	}
	return toks, nil
}

// LoadPySparkSubmission loads the submission a Python process started with
// the environment environ ("K=V"; nil is an empty one, as in LoadSubmission)
// makes (PySparkArgs), with that environment minus $PYSPARK_SUBMIT_ARGS
// itself (it is the command line now, not a source the rewrite cannot
// reach).
func LoadPySparkSubmission(environ []string) (*Submission, error) {
	env := envMap(environ)
	toks, err := PySparkArgs(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	s, err := LoadSubmission(toks, withoutEnv(environ, EnvPySparkSubmitArgs))
	if err != nil {
		return nil, err
	}
	if s.DeployMode() == "cluster" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "$%s: cluster deploy mode is not applicable to Spark shells (pyspark-shell): the driver is the Python process here", EnvPySparkSubmitArgs)
	}
	s.pyspark = true
	return s, nil
}

// withoutEnv returns environ ("K=V") without the variables names.
func withoutEnv(environ []string, names ...string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}
