package submit

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// spark-submit's options that take a value, by alias, with their canonical
// name: Spark 3.5's SparkSubmitOptionParser.opts plus Spark 4's --remote
// (3.4+) and --driver-default-class-path.
var submitValueOpts = map[string]string{
	"--archives":                  "--archives",
	"--class":                     "--class",
	"--conf":                      "--conf",
	"-c":                          "--conf",
	"--deploy-mode":               "--deploy-mode",
	"--driver-class-path":         "--driver-class-path",
	"--driver-cores":              "--driver-cores",
	"--driver-default-class-path": "--driver-default-class-path",
	"--driver-java-options":       "--driver-java-options",
	"--driver-library-path":       "--driver-library-path",
	"--driver-memory":             "--driver-memory",
	"--executor-cores":            "--executor-cores",
	"--executor-memory":           "--executor-memory",
	"--files":                     "--files",
	"--jars":                      "--jars",
	"--keytab":                    "--keytab",
	"--kill":                      "--kill",
	"--master":                    "--master",
	"--remote":                    "--remote",
	"--name":                      "--name",
	"--num-executors":             "--num-executors",
	"--packages":                  "--packages",
	"--exclude-packages":          "--exclude-packages",
	"--principal":                 "--principal",
	"--properties-file":           "--properties-file",
	"--proxy-user":                "--proxy-user",
	"--py-files":                  "--py-files",
	"--queue":                     "--queue",
	"--repositories":              "--repositories",
	"--status":                    "--status",
	"--total-executor-cores":      "--total-executor-cores",
}

// spark-submit's switches, by alias (SparkSubmitOptionParser.switches; Spark
// 4 adds --load-spark-defaults).
var submitSwitches = map[string]string{
	"--help":                "--help",
	"-h":                    "--help",
	"--supervise":           "--supervise",
	"--usage-error":         "--usage-error",
	"--verbose":             "--verbose",
	"-v":                    "--verbose",
	"--version":             "--version",
	"--load-spark-defaults": "--load-spark-defaults",
}

// Actions of a spark-submit command line.
const (
	ActionSubmit     = "submit"
	ActionKill       = "kill"
	ActionStatus     = "status"
	ActionVersion    = "version"
	ActionHelp       = "help"
	ActionUsageError = "usage-error"
)

// Special primary resources (SparkSubmit.isShell / isInternal).
const (
	ResourceSparkInternal = "spark-internal"
	ResourcePySparkShell  = "pyspark-shell"
	ResourceSparkShell    = "spark-shell"
	ResourceSparkRShell   = "sparkr-shell"
)

// specialClasses are the launcher's special main classes
// (SparkSubmitCommandBuilder.specialClasses, Spark 3.5 and 4.x), with the
// primary resource the launcher passes for them. After such a --class the
// launcher allows mixed arguments: every unknown token becomes an
// application argument and parsing goes on (OptionParser.handleUnknown).
var specialClasses = map[string]string{
	"org.apache.spark.repl.Main":                               ResourceSparkShell,
	"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver": ResourceSparkInternal,
	"org.apache.spark.sql.hive.thriftserver.HiveThriftServer2": ResourceSparkInternal,
	"org.apache.spark.sql.connect.service.SparkConnectServer":  ResourceSparkInternal,
	"org.apache.spark.sql.application.ConnectRepl":             "connect-shell",
}

// An Arg is one spark-submit option before the primary resource.
type Arg struct {
	// Name is the canonical option name ("--conf" for -c too).
	Name string
	// Value is the option's value ("k=v" for --conf); "" for a switch.
	Value string
	// Tokens are the argv tokens as given: ["--jars", "a.jar"] or
	// ["--jars=a.jar"] or ["-v"].
	Tokens []string
}

// Switch reports whether a is an option without a value.
func (a Arg) Switch() bool { _, ok := submitSwitches[a.Name]; return ok }

// ConfKV splits a --conf value as Spark does (at the first '=').
func (a Arg) ConfKV() (string, string) {
	k, v, _ := strings.Cut(a.Value, "=")
	return k, v
}

// Eq reports whether the option was given in --opt=value form.
func (a Arg) Eq() bool { return len(a.Tokens) == 1 && !a.Switch() }

// Argv is a parsed spark-submit command line, with spark-submit's own
// grammar (SparkSubmitOptionParser.parse): options before the primary
// resource, in "--opt value" or "--opt=value" form; the first token that is
// not an option is the primary resource; every later token is an
// application argument, untouched even when it looks like an option.
type Argv struct {
	// Options are the options before the primary resource, in order.
	Options []Arg
	// Primary is the primary resource (jar, .py, .R, spark-internal,
	// pyspark-shell…); HasPrimary is false when there is none (--kill,
	// --status, --version).
	Primary    string
	HasPrimary bool
	// ImpliedPrimary is set when Primary comes from a special --class
	// (spark-shell, spark-internal: see specialClasses), not from a token.
	ImpliedPrimary bool
	// AppArgs are the tokens after the primary resource (or after
	// --version, where spark-submit stops parsing), verbatim. After a
	// special --class they are every token that is not an option, wherever
	// it stands (the launcher's mixed arguments).
	AppArgs []string
	// appArgAt[i] is, in mixed mode, the number of Options before
	// AppArgs[i] in the argv; nil otherwise (AppArgs follow the primary).
	appArgAt []int
	// Action is ActionSubmit unless --kill, --status, --version, --help or
	// --usage-error was given.
	Action string
}

// ParseArgv parses spark-submit arguments (without the spark-submit binary).
// An unknown option, an option without its value and a --conf without '='
// are usage errors (errdefs.BadArgument) naming the argument, as in spark-submit.
//
// A command line whose first token is the Spark Connect server's script
// (start-connect-server.sh) is read as the script hands it to spark-submit
// (see ParseConnectServerArgv); one whose first token is the spark-pipelines
// CLI (Spark 4.1+: "spark-pipelines" or a path ending in /spark-pipelines)
// as SparkPipelines reads it (see ParsePipelinesArgv).
func ParseArgv(args []string) (*Argv, error) {
	if len(args) > 0 && IsConnectServerProgram(args[0]) {
		return ParseConnectServerArgv(args)
	}
	if len(args) > 0 && IsPipelinesProgram(args[0]) {
		return ParsePipelinesArgv(args)
	}
	a := &Argv{Action: ActionSubmit}
	mixed := false
	i := 0
	for ; i < len(args); i++ {
		tok := args[i]
		name, value, eq := splitEqOpt(tok)
		if canon, ok := submitValueOpts[name]; ok {
			arg, next, err := valueArg("spark-submit", args, i, canon, name, value, eq)
			if err != nil {
				return nil, err
			}
			i = next
			if err := a.handle(arg); err != nil {
				return nil, err
			}
			if res, ok := specialClasses[arg.Value]; ok && canon == "--class" {
				// SparkSubmitCommandBuilder.OptionParser.handle(CLASS):
				// allowsMixedArguments = true; appResource = the special
				// resource. It stays so for the rest of the argv.
				mixed = true
				a.Primary, a.HasPrimary, a.ImpliedPrimary = res, true, true
				if a.appArgAt == nil {
					a.appArgAt = []int{}
				}
			}
			continue
		}
		if canon, ok := submitSwitches[name]; ok {
			// spark-submit accepts (and ignores) a value given to a switch
			// in = form: "--verbose=x" is --verbose.
			arg := Arg{Name: canon, Tokens: []string{tok}}
			a.Options = append(a.Options, arg)
			switch canon {
			case "--help", "--usage-error":
				// SparkSubmitArguments.handle prints the usage and exits
				// where it meets them: the first one wins.
				if a.Action != ActionHelp && a.Action != ActionUsageError {
					a.Action = strings.TrimPrefix(canon, "--")
				}
			case "--version":
				if a.Action != ActionHelp && a.Action != ActionUsageError {
					a.Action = ActionVersion
				}
				// SparkSubmitArguments.handle returns false: parsing stops.
				a.addAppArgs(args[i+1:]...)
				return a, nil
			}
			continue
		}
		if mixed {
			// OptionParser.handleUnknown with allowsMixedArguments: an
			// application argument, even when it looks like an option.
			a.addAppArgs(tok)
			continue
		}
		if strings.HasPrefix(name, "-") {
			hint := ""
			if eq {
				hint = fmt.Sprintf(" (the option %s is unknown)", name)
			}
			return nil, errdefs.Errorf(errdefs.BadArgument, "spark-submit argument %q: unrecognized option%s", tok, hint)
		}
		a.Primary, a.HasPrimary = tok, true
		i++
		break
	}
	if i < len(args) {
		a.addAppArgs(args[i:]...)
	}
	return a, nil
}

// ResourceSparkPipelines is the primary resource of a spark-pipelines
// command line: SparkPipelines runs pyspark/pipelines/cli.py through
// spark-submit, a Python application.
const ResourceSparkPipelines = "spark-pipelines"

// IsPipelinesProgram reports whether tok names the spark-pipelines CLI.
func IsPipelinesProgram(tok string) bool {
	return tok == ResourceSparkPipelines || strings.HasSuffix(tok, "/"+ResourceSparkPipelines)
}

// ParsePipelinesArgv parses a spark-pipelines command line (args[0] is the
// program) as SparkPipelines.splitArgs does: every spark-submit option,
// wherever it stands, is spark-submit's; --name, -h and --help (with
// --name's value) and every other token are the pipeline CLI's own
// arguments, kept in place as application arguments (mixed arguments, as
// after a special --class). --class and a --conf spark.api.mode other than
// connect are refused, as spark-pipelines refuses them. The program token
// is Options[0] (Name ResourceSparkPipelines), so that Tokens gives the
// command line back; SplitProgram takes it off again.
func ParsePipelinesArgv(args []string) (*Argv, error) {
	a := &Argv{Action: ActionSubmit, Primary: ResourceSparkPipelines, HasPrimary: true, ImpliedPrimary: true, appArgAt: []int{}}
	a.Options = append(a.Options, Arg{Name: ResourceSparkPipelines, Tokens: []string{args[0]}})
	for i := 1; i < len(args); i++ {
		tok := args[i]
		name, value, eq := splitEqOpt(tok)
		canon, isValue := submitValueOpts[name]
		canonSwitch, isSwitch := submitSwitches[name]
		switch {
		case isValue:
			arg, next, err := valueArg("spark-pipelines", args, i, canon, name, value, eq)
			if err != nil {
				return nil, err
			}
			i = next
			switch {
			case canon == "--class":
				return nil, errdefs.Errorf(errdefs.BadArgument, "spark-pipelines argument --class %q: --class argument not supported", arg.Value)
			case canon == "--name":
				a.addAppArgs(arg.Tokens...) // the pipeline CLI's --name
				continue
			case canon == "--conf" && strings.HasPrefix(arg.Value, "spark.api.mode=") && arg.Value != "spark.api.mode=connect":
				return nil, errdefs.Errorf(errdefs.BadArgument, "spark-pipelines --conf %q: spark-pipelines only supports spark.api.mode=connect", arg.Value)
			}
			if err := a.handle(arg); err != nil {
				return nil, err
			}
		case isSwitch && canonSwitch == "--help":
			a.addAppArgs(tok) // -h/--help: the pipeline CLI's usage
		case isSwitch:
			a.Options = append(a.Options, Arg{Name: canonSwitch, Tokens: []string{tok}})
		default:
			a.addAppArgs(tok)
		}
	}
	return a, nil
}

// SplitProgram takes a leading spark-pipelines program token off args
// (as Tokens gives them): the program, the arguments it takes, and true;
// else "", args, false.
func SplitProgram(args []string) (program string, rest []string, ok bool) {
	if len(args) > 0 && IsPipelinesProgram(args[0]) {
		return args[0], args[1:], true
	}
	return "", args, false
}

// PipelinesBin is the spark-pipelines to run for program, the token the
// command line starts with: itself when it is a path, else the one next to
// sparkSubmit (both live in $SPARK_HOME/bin).
func PipelinesBin(program, sparkSubmit string) string {
	if strings.Contains(program, "/") || sparkSubmit == "" {
		return program
	}
	return filepath.Join(filepath.Dir(sparkSubmit), ResourceSparkPipelines)
}

// IsPipelines reports whether a is a spark-pipelines command line.
func (a *Argv) IsPipelines() bool { return a.HasPrimary && a.Primary == ResourceSparkPipelines }

// valueArg is the option args[i] (canonical name canon, as given name)
// with its value: the one after "=" when eq, else the next token; next is
// the index of the last token it took. A missing value is a usage error
// naming prog's argument.
func valueArg(prog string, args []string, i int, canon, name, value string, eq bool) (arg Arg, next int, err error) {
	arg = Arg{Name: canon, Tokens: []string{args[i]}}
	if eq {
		arg.Value = value
		return arg, i, nil
	}
	if i == len(args)-1 {
		return arg, i, errdefs.Errorf(errdefs.BadArgument, "%s argument %q: missing value (Spark: \"Missing argument for option '%s'.\")", prog, name, name)
	}
	arg.Value = args[i+1]
	arg.Tokens = append(arg.Tokens, args[i+1])
	return arg, i + 1, nil
}

// addAppArgs appends application arguments at the current position.
func (a *Argv) addAppArgs(toks ...string) {
	for _, t := range toks {
		a.AppArgs = append(a.AppArgs, t)
		if a.appArgAt != nil {
			a.appArgAt = append(a.appArgAt, len(a.Options))
		}
	}
}

// Mixed reports whether the application arguments stand between the options
// (the launcher's mixed arguments, after a special --class); AppArgsBefore
// then places them.
func (a *Argv) Mixed() bool { return a.appArgAt != nil }

// AppArgsBefore returns the application arguments that stand right before
// Options[i] in the argv (mixed mode only; i == len(Options) gives those
// after the last option).
func (a *Argv) AppArgsBefore(i int) []string {
	if a.appArgAt == nil {
		return nil
	}
	var out []string
	for j, at := range a.appArgAt {
		if at == i {
			out = append(out, a.AppArgs[j])
		}
	}
	return out
}

func (a *Argv) handle(arg Arg) error {
	switch arg.Name {
	case "--conf":
		if !strings.Contains(arg.Value, "=") {
			return errdefs.Errorf(errdefs.BadArgument, "spark-submit --conf %q: Spark config without '='", redact.ConfArg(arg.Value))
		}
	case "--deploy-mode":
		if arg.Value != "client" && arg.Value != "cluster" {
			return errdefs.Errorf(errdefs.BadArgument, "spark-submit --deploy-mode %q: must be either \"client\" or \"cluster\"", arg.Value)
		}
	case "--kill", "--status":
		// SparkSubmitArguments.handle: "Action cannot be both $action and
		// KILL/REQUEST_STATUS" once one is set. --help and --usage-error
		// met before have already exited.
		switch a.Action {
		case ActionHelp, ActionUsageError:
		case ActionKill, ActionStatus:
			return errdefs.Errorf(errdefs.BadArgument, "spark-submit %s %q: Action cannot be both %s and %s", arg.Name, arg.Value, a.Action, strings.TrimPrefix(arg.Name, "--"))
		default:
			a.Action = strings.TrimPrefix(arg.Name, "--")
		}
	}
	a.Options = append(a.Options, arg)
	return nil
}

// JavaLineTerminators are the characters Java's regex '.' does not match.
const JavaLineTerminators = "\n\r\u0085\u2028\u2029"

// splitEqOpt applies spark-submit's "(--[^=]+)=(.+)" pattern (Java's '.'
// matches no line terminator).
func splitEqOpt(tok string) (name, value string, eq bool) {
	if !strings.HasPrefix(tok, "--") {
		return tok, "", false
	}
	i := strings.IndexByte(tok, '=')
	if i <= 2 || i == len(tok)-1 {
		return tok, "", false
	}
	v := tok[i+1:]
	if strings.ContainsAny(v, JavaLineTerminators) {
		return tok, "", false
	}
	return tok[:i], v, true
}

// Flag returns the value of the last occurrence of the canonical option
// name (spark-submit: the last one wins).
func (a *Argv) Flag(name string) (string, bool) {
	for i := len(a.Options) - 1; i >= 0; i-- {
		if a.Options[i].Name == name {
			return a.Options[i].Value, true
		}
	}
	return "", false
}

// Has reports whether the canonical option or switch name was given.
func (a *Argv) Has(name string) bool { _, ok := a.Flag(name); return ok }

// Conf returns the value of the last --conf key=... (the last one wins).
func (a *Argv) Conf(key string) (string, bool) {
	for i := len(a.Options) - 1; i >= 0; i-- {
		if a.Options[i].Name == "--conf" {
			if k, v := a.Options[i].ConfKV(); k == key {
				return v, true
			}
		}
	}
	return "", false
}

// Tokens returns the command line again, token for token.
func (a *Argv) Tokens() []string {
	var out []string
	if a.appArgAt != nil {
		for i, o := range a.Options {
			out = append(out, a.AppArgsBefore(i)...)
			out = append(out, o.Tokens...)
		}
		return append(out, a.AppArgsBefore(len(a.Options))...)
	}
	for _, o := range a.Options {
		out = append(out, o.Tokens...)
	}
	if a.HasPrimary {
		out = append(out, a.Primary)
	}
	return append(out, a.AppArgs...)
}

// IsPython reports whether the primary resource is a Python app
// (SparkSubmit.isPython).
func (a *Argv) IsPython() bool {
	return a.HasPrimary && (strings.HasSuffix(a.Primary, ".py") || a.Primary == ResourcePySparkShell || a.Primary == ResourceSparkPipelines)
}

// IsInternal reports whether the primary resource is spark-internal
// (Thrift server, Spark Connect server, …).
func (a *Argv) IsInternal() bool { return a.HasPrimary && a.Primary == ResourceSparkInternal }

// ShellQuote quotes args for a POSIX shell, on one line: words that need no
// quoting are left bare, others are single-quoted.
func ShellQuote(args []string) string {
	var b strings.Builder
	for i, s := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(s))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// IsValueOption reports whether name ("--master", "-c") is a spark-submit
// option that takes a value.
func IsValueOption(name string) bool { _, ok := submitValueOpts[name]; return ok }
