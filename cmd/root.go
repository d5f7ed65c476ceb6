// Package cmd is prebake's cobra CLI: wiring only. The work is done in the
// resolver, layers, s3store and submit packages.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
)

// globals are the persistent flags of every command.
type globals struct {
	output  string
	quiet   bool
	verbose bool
	config  string
	// resultFile is --result-file; warnings collects the run's warnings
	// for the JSON result.
	resultFile string
	warnings   *warningSink
}

// subcommands registers the commands; each command file adds itself in init.
var subcommands []func(g *globals) *cobra.Command

func register(f func(g *globals) *cobra.Command) { subcommands = append(subcommands, f) }

// NewRoot builds the command tree.
func NewRoot() *cobra.Command { return newRoot(&globals{warnings: &warningSink{}}) }

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "prebake",
		Short: "Resolve Spark --packages ahead of time, bake them into an image or S3, submit and follow the driver",
		Long: `prebake replaces spark-submit's run-time --packages resolution (Apache Ivy) with one
done ahead of time, in Go, with Spark's exact semantics. The jars are cached in an
image layer or in S3, the submission is rewritten to use them, and the driver is
followed to its real end.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.SetVersionTemplate("prebake {{.Version}}\n")
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "", "output format: text|json (resolve: tree|names|json)")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print only results and errors")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "print more progress detail")
	root.PersistentFlags().StringVar(&g.resultFile, "result-file", "", "also write the JSON result (or, on failure, {exitCode, error, warnings}) to this file, atomically (Airflow XCom: /airflow/xcom/return.json)")
	root.PersistentFlags().StringVar(&g.config, "config", "", "prebake.yaml with defaults for every command's flags (default $PREBAKE_CONFIG, else ./prebake.yaml when it exists); flags win, then PREBAKE_* variables, then the file")
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if g.quiet && g.verbose {
			return exitcode.Errorf(exitcode.Usage, "-q and -v: give one of them")
		}
		path, err := applySettings(c.Flags(), g.config, os.Getenv)
		if path != "" && g.verbose && err == nil {
			fmt.Fprintf(c.ErrOrStderr(), "prebake: using defaults from %s\n", path)
		}
		return err
	}
	root.SetFlagErrorFunc(flagError)
	for _, f := range subcommands {
		root.AddCommand(f(g))
	}
	addCompletions(root)
	return root
}

// Execute runs the CLI and returns the process exit code.
func Execute(args []string) int {
	return ExecuteContext(context.Background(), args, os.Stdout, os.Stderr)
}

// ExecuteContext runs the CLI with the given streams; SIGINT and SIGTERM
// cancel ctx.
func ExecuteContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{warnings: &warningSink{}}
	root := newRoot(g)
	rec := &stdoutRecorder{w: stdout}
	root.SetArgs(args)
	root.SetOut(rec)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	code := 0
	if err != nil {
		code = exitcode.Code(err)
		var ee *exitcode.Error
		if !errors.As(err, &ee) && isCobraUsageError(err) {
			code = exitcode.Usage
			err = exitcode.New(code, err)
		}
		fmt.Fprintf(stderr, "prebake: %s\n", redact.Line(err.Error()))
	}
	if rerr := finishResult(g, rec, err, code); rerr != nil {
		fmt.Fprintf(stderr, "prebake: %s\n", redact.Line(rerr.Error()))
		if code == 0 {
			code = exitcode.Code(rerr)
		}
	}
	return code
}

func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// checkOutput validates -o for a command, defaulting to the first allowed value.
func checkOutput(g *globals, allowed ...string) (string, error) {
	if g.output == "" {
		return allowed[0], nil
	}
	for _, a := range allowed {
		if g.output == a {
			return a, nil
		}
	}
	return "", exitcode.Errorf(exitcode.Usage, "-o %q: must be one of %v", g.output, allowed)
}

// reporter returns the progress reporter for stderr honouring -q and -v.
func (g *globals) reporter(stderr io.Writer) *progress.Reporter {
	level := progress.Normal
	switch {
	case g.quiet:
		level = progress.Quiet
	case g.verbose:
		level = progress.Verbose
	}
	var opts []progress.Option
	if g.warnings != nil {
		opts = append(opts, progress.WithWarnings(g.warnings.add))
	}
	return progress.New(stderr, level, opts...)
}
