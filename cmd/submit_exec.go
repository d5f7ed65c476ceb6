package cmd

import (
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/local"
	"github.com/prebake/prebake/submit/rewrite"
)

// runExec is `prebake submit --exec -- python3 app.py`: the submission is
// $PYSPARK_SUBMIT_ARGS (pyspark's default pyspark-shell when unset), which
// a Python process that starts its own JVM passes to spark-submit. It is
// resolved, baked and rewritten as an argv is, and the program runs with
// the new value; the program's exit code is the result, as spark-submit's
// is for the local backend.
func runExec(c *cobra.Command, g *globals, as adapters, pp prepareFunc, f *submitFlags, args []string) error {
	if len(args) == 0 {
		return exitcode.Errorf(exitcode.Usage, "--exec: give the program to run after --: prebake submit --exec -- python3 app.py")
	}
	if f.batch != "" || f.pollOnly != "" {
		return exitcode.Errorf(exitcode.Usage, "--exec runs one program here: --batch and --status-poll-only do not apply")
	}
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	sub, err := submit.LoadPySparkSubmission(os.Environ())
	if err != nil {
		return err
	}
	if err := c.Context().Err(); err != nil {
		return err // a signal while the conf loaded: nothing run (80)
	}
	redact.AddConfSecrets(sub.SparkConf())
	if submit.RunsHere(sub) {
		ignoreTargetsHere(g, f, c.Flags(), sub.Master(), c.ErrOrStderr())
	}
	f.localSparkJars = localSparkJars(f.sparkSubmit, os.Getenv, exec.LookPath)
	f.rewriteOptions = append(f.rewriteOptions, rewrite.WithPythonApps(pythonFiles(args)...))
	r := &run{f: f, master: sub.Master(), out: out, quiet: g.quiet, verbose: g.verbose, stdout: c.OutOrStdout(), stderr: c.ErrOrStderr()}
	a := as.of(submit.KindLocal)
	be, err := local.New(
		local.WithPySparkProgram(args),
		local.WithTimeout(f.timeout),
		local.WithJSON(out == outJSON),
		local.WithStdio(os.Stdin, r.stdout, r.stderr),
	)
	if err != nil {
		return err
	}
	rep := g.reporter(r.stderr)
	defer rep.Wait()
	so, err := submitOptions(c.Context(), f, sub, pp, rep)
	if err != nil {
		return err
	}
	o, err := pipeline.Submit(c.Context(), sub, so, be)
	if o == nil {
		return prepareErr(f, err)
	}
	return a.Render(r, o, err)
}
