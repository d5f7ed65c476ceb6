package submit

import (
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// The Spark Connect server's launcher script and what it hands spark-submit
// (sbin/start-connect-server.sh, Spark 3.4+): spark-daemon.sh submit runs
// spark-submit --class ConnectServerClass --name "Spark Connect server"
// followed by the script's own arguments.
const (
	ConnectServerScript = "start-connect-server.sh"
	ConnectServerClass  = "org.apache.spark.sql.connect.service.SparkConnectServer"
	ConnectServerName   = "Spark Connect server"
	// ConnectServerWait is the script's own first argument (Spark 4.0+):
	// run in the foreground (SPARK_NO_DAEMONIZE=1).
	ConnectServerWait = "--wait"
)

// IsConnectServerProgram reports whether tok names the Connect server's
// launcher script ("start-connect-server.sh" or a path ending in it).
func IsConnectServerProgram(tok string) bool {
	return tok == ConnectServerScript || strings.HasSuffix(tok, "/"+ConnectServerScript)
}

// ParseConnectServerArgv parses a start-connect-server.sh command line
// (args[0] is the script) as the script and spark-submit read it: a
// leading --wait is the script's; the rest is spark-submit's argv after the
// script's --class SparkConnectServer --name "Spark Connect server", so the
// launcher's mixed arguments apply (a special class) and a later --name or
// --class wins as spark-submit's last one does. When the joined arguments
// end in --help or -h the script prints its usage and runs nothing: the
// action is help.
//
// Options[0] is the script token (with --wait), Name ConnectServerScript;
// the implied --class and --name are Options[1] and [2] with no Tokens, so
// that Tokens gives the command line back as given.
func ParseConnectServerArgv(args []string) (*Argv, error) {
	prog := Arg{Name: ConnectServerScript, Tokens: []string{args[0]}}
	rest := args[1:]
	if len(rest) > 0 && rest[0] == ConnectServerWait {
		prog.Tokens = append(prog.Tokens, rest[0])
		rest = rest[1:]
	}
	if n := len(args); n > 1 && (strings.HasSuffix(args[n-1], "--help") || strings.HasSuffix(args[n-1], "-h")) {
		// [[ "$@" = *--help ]] || [[ "$@" = *-h ]]: usage, exit.
		return &Argv{Action: ActionHelp, Options: []Arg{prog}, AppArgs: rest}, nil
	}
	implied := []string{"--class", ConnectServerClass, "--name", ConnectServerName}
	a, err := ParseArgv(append(implied, rest...))
	if err != nil {
		return nil, err
	}
	if v, _ := a.Flag("--deploy-mode"); v == "cluster" {
		// SparkSubmit.prepareSubmitEnvironment refuses it too.
		return nil, errdefs.Errorf(errdefs.BadArgument, "%s --deploy-mode cluster: Cluster deploy mode is not applicable to Spark Connect server (Spark); bake the server's image instead", ConnectServerScript)
	}
	// The implied options are the script's, not tokens of this command line.
	a.Options[0].Tokens, a.Options[1].Tokens = nil, nil
	a.Options = append([]Arg{prog}, a.Options...)
	for i := range a.appArgAt {
		a.appArgAt[i]++
	}
	return a, nil
}

// IsConnectServer reports whether a is a start-connect-server.sh command
// line.
func (a *Argv) IsConnectServer() bool {
	return len(a.Options) > 0 && a.Options[0].Name == ConnectServerScript
}

// ConnectServerProgram splits a start-connect-server.sh command line (as
// Tokens gives it) into the script to run and its arguments; ok is false
// for any other command line. A bare script name is the one in sparkHome's
// sbin when sparkHome is set.
func ConnectServerProgram(args []string, sparkHome string) (program string, rest []string, ok bool) {
	if len(args) == 0 || !IsConnectServerProgram(args[0]) {
		return "", args, false
	}
	program = args[0]
	if !strings.Contains(program, "/") && sparkHome != "" {
		program = filepath.Join(sparkHome, "sbin", ConnectServerScript)
	}
	return program, args[1:], true
}
