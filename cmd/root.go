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
}

// rootConfig is what a command tree is built with.
type rootConfig struct {
	prepare prepareFunc
}

// rootOption configures newRoot (tests).
type rootOption func(*rootConfig)

// withPrepare replaces submit's prepare step (tests: a pass-through).
func withPrepare(p prepareFunc) rootOption { return func(c *rootConfig) { c.prepare = p } }

// NewRoot builds the command tree.
func NewRoot() *cobra.Command { return newRoot() }

// newRoot builds the command tree, explicitly.
func newRoot(opts ...rootOption) *cobra.Command {
	cfg := rootConfig{prepare: prepare}
	for _, o := range opts {
		o(&cfg)
	}
	g := &globals{}
	root := &cobra.Command{
		Use:   "prebake",
		Short: "Resolve Spark --packages ahead of time, bake them into an image or S3, submit and follow the driver",
		Long: `prebake replaces spark-submit's run-time --packages resolution (Apache Ivy) with one
done ahead of time, in Go, with Spark's exact semantics. The jars are cached in an
image layer or in S3, the submission is rewritten to use them, and the driver is
followed to its real end.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "", "output format: text|json (resolve: tree|names|json)")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print only results and errors")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "print more progress detail")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitcode.New(exitcode.Usage, fmt.Errorf("%s: %w", c.CommandPath(), err))
	})
	bs := newBackends()
	root.AddCommand(
		newBakeCmd(g),
		newGCCmd(g),
		newIDCmd(g, bs, "kill"),
		newInspectCmd(g),
		newLockCmd(g),
		newResolveCmd(g),
		newRewriteCmd(g),
		newSBOMCmd(g),
		newIDCmd(g, bs, "status"),
		newSubmitCmd(g, bs, cfg.prepare),
		newWarmCmd(g),
		newWhyCmd(g),
	)
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
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := exitcode.Code(err)
	var ee *exitcode.Error
	if !errors.As(err, &ee) && isCobraUsageError(err) {
		code = exitcode.Usage
	}
	fmt.Fprintf(stderr, "prebake: %s\n", redact.Line(err.Error()))
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
	return progress.New(stderr, level)
}
