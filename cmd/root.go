// Package cmd is prebake's cobra CLI: it parses flags, calls the libraries
// (resolver, layers, s3store, pipeline, submit and its backends), prints
// their results and maps their errors to exit codes (exitcode.Code). The
// command tree is built explicitly in newRoot; there is no registry.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
)

// globals are the persistent flags of every command.
type globals struct {
	output  outputFormat
	quiet   bool
	verbose bool
	config  string
	// resultFile is --result-file; warnings collects the run's warnings
	// for the JSON result.
	resultFile string
	warnings   *warningSink
	// explicit are the flags the command line gave (before the
	// environment and prebake.yaml gave the others their defaults).
	explicit map[string]bool
}

// rootConfig is what a command tree is built with.
type rootConfig struct {
	prepare prepareFunc
}

// rootOption configures newRoot (tests).
type rootOption func(*rootConfig)

// withPrepare replaces submit's prepare step (tests: a pass-through).
func withPrepare(p prepareFunc) rootOption { return func(c *rootConfig) { c.prepare = p } }

// rootGlobals maps a command tree to its globals, for execute (the JSON
// result and --result-file).
var rootGlobals sync.Map

// NewRoot builds the command tree.
func NewRoot() *cobra.Command { return newRoot() }

// newRoot builds the command tree, explicitly.
func newRoot(opts ...rootOption) *cobra.Command {
	cfg := rootConfig{prepare: pipeline.Prepare}
	for _, o := range opts {
		o(&cfg)
	}
	g := &globals{warnings: &warningSink{}}
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
	root.PersistentFlags().VarP(outputValue{&g.output}, "output", "o", "output format: text|json|json-pretty (resolve: tree|names|json|json-pretty); json is one line")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print only results and errors")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "print more progress detail")
	root.PersistentFlags().StringVar(&g.resultFile, "result-file", "", "also write the command's JSON result, whatever -o is (or, with none, {exitCode, error, warnings}), to this file, atomically (Airflow XCom: /airflow/xcom/return.json)")
	root.PersistentFlags().StringVar(&g.config, "config", "", "prebake.yaml with defaults for every command's flags (default $PREBAKE_CONFIG, else ./prebake.yaml when it exists); flags win, then PREBAKE_* variables, then the file")
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if g.quiet && g.verbose {
			return exitcode.Errorf(exitcode.Usage, "-q and -v: give one of them")
		}
		routeKlog(c.ErrOrStderr(), g.verbose)
		g.explicit = map[string]bool{}
		c.Flags().Visit(func(f *pflag.Flag) { g.explicit[f.Name] = true })
		path, err := applySettings(c.Flags(), g.config, os.Getenv)
		if path != "" && g.verbose && err == nil {
			fmt.Fprintf(c.ErrOrStderr(), "prebake: using defaults from %s\n", path)
		}
		return err
	}
	root.SetFlagErrorFunc(flagError)
	as := newAdapters()
	root.AddCommand(
		newBakeCmd(g),
		newBundleCmd(g),
		newDoctorCmd(g),
		newCacheCmd(g),
		newConnectCmd(g),
		newGCCmd(g),
		newIDCmd(g, as, "kill"),
		newInitCmd(g),
		newInspectCmd(g),
		newOutdatedCmd(g),
		newUpgradeReportCmd(g),
		newKeysCmd(g),
		newLockCmd(g),
		newResolveCmd(g),
		newRewriteCmd(g),
		newSBOMCmd(g),
		newIDCmd(g, as, "status"),
		newSubmitCmd(g, as, cfg.prepare),
		newWarmCmd(g),
		newWhyCmd(g),
	)
	addCompletions(root)
	rootGlobals.Store(root, g)
	return root
}

// Execute runs the CLI and returns the process exit code.
func Execute(args []string) int {
	return ExecuteContext(context.Background(), args, os.Stdout, os.Stderr)
}

// ExecuteContext runs the CLI with the given streams; SIGINT and SIGTERM
// cancel ctx.
func ExecuteContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return execute(ctx, newRoot(), args, stdout, stderr)
}

// execute runs root with args and the given streams and returns the exit
// code; SIGINT and SIGTERM cancel ctx.
func execute(ctx context.Context, root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{warnings: &warningSink{}}
	if v, ok := rootGlobals.LoadAndDelete(root); ok {
		g = v.(*globals)
	}
	rec := &stdoutRecorder{w: stdout, g: g}
	root.SetArgs(args)
	root.SetOut(rec)
	root.SetErr(stderr)
	err := withHint(root.ExecuteContext(ctx))
	err = cancelled(ctx, err)
	code := 0
	if err != nil {
		code = exitcode.Code(err)
		var ee *exitcode.Error
		// Only an unclassified error can be cobra's: a classified one whose
		// message happens to contain "accepts " keeps its code.
		if !errors.As(err, &ee) && errdefs.KindOf(err) == errdefs.Unknown && isCobraUsageError(err) {
			code = exitcode.Usage
			err = exitcode.New(code, err)
		}
		if asSparkSubmit(ctx) {
			fmt.Fprintf(stderr, "prebake (as spark-submit): %s\n", redact.Line(linkMessage(err.Error())))
		} else {
			fmt.Fprintf(stderr, "prebake: %s\n", redact.Line(err.Error()))
		}
	}
	if rerr := finishResult(g, rec, err, code); rerr != nil {
		fmt.Fprintf(stderr, "prebake: %s\n", redact.Line(rerr.Error()))
		if code == 0 {
			code = exitcode.Code(rerr)
		}
	}
	return code
}

// cancelled gives a run that failed after ctx was cancelled (SIGINT,
// SIGTERM: an Airflow task killed, a Ctrl-C) the one code of a cancel,
// whatever the failure it caused looks like (a broken download, an
// aborted upload, a killed driver): 80, as submit's backends report a
// cancel (README, "Exit codes"). A deadline is not a cancel.
func cancelled(ctx context.Context, err error) error {
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	if strings.Contains(err.Error(), "cancelled") {
		return exitcode.New(exitcode.DriverFailed, err)
	}
	return exitcode.New(exitcode.DriverFailed, fmt.Errorf("cancelled (%v): %w", context.Cause(ctx), err))
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

// checkOutput checks that a command prints -o's format (one of allowed),
// defaulting to the first allowed format.
func checkOutput(g *globals, allowed ...outputFormat) (outputFormat, error) {
	if g.output == "" {
		return allowed[0], nil
	}
	for _, a := range allowed {
		if g.output == a || g.output == outJSONPretty && a == outJSON {
			return a, nil
		}
	}
	return "", exitcode.Errorf(exitcode.Usage, "-o %q: must be one of %v", g.output, withPretty(allowed))
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
	r, err := progress.New(stderr, level, opts...)
	if err != nil {
		panic(err) // WithWarnings cannot fail
	}
	return r
}
