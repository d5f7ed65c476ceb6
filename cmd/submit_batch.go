package cmd

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s"
)

// maxBatchFile bounds the --batch file.
const maxBatchFile = 64 << 20

// batchResult is one application's result in `submit --batch -o json`.
type batchResult struct {
	jsondoc.BatchOutcome[*k8s.Result]
}

// batchOutput is `submit --batch -o json`.
type batchOutput struct {
	Submitted int           `json:"submitted"`
	Failed    int           `json:"failed"`
	ExitCode  int           `json:"exitCode"` // the highest of the results'
	Results   []batchResult `json:"results"`
}

// runBatch is `prebake submit --batch FILE`: every line's submission is
// loaded and prepared first (a bad line stops the batch before anything is
// created: 65 naming the line), then all are submitted natively, --parallel
// at a time, by one process with one client per credentials, without
// waiting for the applications. The exit code is the highest of the
// results'.
func runBatch(c *cobra.Command, g *globals, as adapters, pp prepareFunc, f *submitFlags, args []string) error {
	ctx, stdout, stderr := c.Context(), c.OutOrStdout(), c.ErrOrStderr()
	b, _ := as.of(submit.KindK8s).(*k8sAdapter)
	switch fl := c.Flags(); {
	case b == nil:
		return exitcode.Errorf(exitcode.Internal, "no k8s backend built in")
	case len(args) > 0:
		return exitcode.Errorf(exitcode.Usage, "--batch %s and a spark-submit command line after --: give one of them", f.batch)
	case f.pollOnly != "", b.dryRun, b.via != "":
		return exitcode.Errorf(exitcode.Usage, "--batch: not with --status-poll-only, --dry-run or --via")
	case fl.Changed("submitter") && b.submitter != k8s.SubmitterNative:
		return exitcode.Errorf(exitcode.Usage, "--batch submits with --submitter native only (got %s)", b.submitter)
	case f.parallel < 1 || f.parallel > k8s.MaxBatchParallel:
		return exitcode.Errorf(exitcode.Usage, "--parallel %d: must be 1 to %d", f.parallel, k8s.MaxBatchParallel)
	}
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	entries, err := readBatchFile(f.batch)
	if err != nil {
		return err
	}
	apps := make([]*submit.Prepared, len(entries))
	f.memo = &pipeline.Memo{} // one resolve and bake per set of packages and images
	for i, e := range entries {
		// A signal between lines ends the batch before it submits
		// anything (80): preparing a line can take a second or more.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("--batch %s: stopped before line %d, nothing submitted: %w", f.batch, e.Line, err)
		}
		if apps[i], err = prepareBatchApp(ctx, g, f, pp, e, stderr); err != nil {
			return err
		}
	}
	r := &run{f: f, quiet: g.quiet, verbose: g.verbose, stdout: stdout, stderr: stderr}
	be, err := k8s.New(append(b.options(r), k8s.WithDriverSparkVersion(b.sparkVersion))...)
	if err != nil {
		return err
	}
	results, err := be.SubmitBatch(ctx, apps, f.parallel)
	if err != nil {
		return err
	}
	return renderBatch(out, entries, results, stdout, stderr)
}

// readBatchFile reads the --batch file ("-": stdin), bounded.
func readBatchFile(path string) ([]k8s.BatchEntry, error) {
	var r io.Reader = io.LimitReader(os.Stdin, maxBatchFile+1)
	if path != "-" {
		rc, err := localfile.Open(path, maxBatchFile)
		if err != nil {
			return nil, fmt.Errorf("--batch: %w", err)
		}
		defer rc.Close()
		r = rc
	}
	return k8s.ReadBatch(r, path)
}

// prepareBatchApp loads and prepares (resolve, bake, rewrite) one line of
// the batch; its errors name the line.
func prepareBatchApp(ctx context.Context, g *globals, f *submitFlags, pp prepareFunc, e k8s.BatchEntry, stderr io.Writer) (*submit.Prepared, error) {
	at := fmt.Sprintf("--batch %s line %d", f.batch, e.Line)
	sub, err := submit.LoadSubmission(e.Args, os.Environ())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: stopped, nothing submitted: %w", at, err)
	}
	redact.AddConfSecrets(sub.SparkConf())
	if submit.ClusterKind(sub.Master()) != submit.ClusterK8s || sub.DeployMode() != "cluster" {
		return nil, exitcode.Errorf(exitcode.DataErr, "%s: master %s, deploy mode %q: a batch submits k8s:// cluster-mode applications only", at, redact.URL(sub.Master()), sub.DeployMode())
	}
	p, err := prepare(ctx, g, f, pp, sub, stderr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return p, nil
}

// renderBatch prints the results (one line each, or one JSON object) and
// returns the highest exit code of them as the run's error.
func renderBatch(out outputFormat, entries []k8s.BatchEntry, results []*k8s.Result, stdout, stderr io.Writer) error {
	o := batchOutput{Results: make([]batchResult, len(results))}
	var worst error
	worstLine := 0
	for i, r := range results {
		out := jsondoc.BatchOutcome[*k8s.Result]{Line: entries[i].Line, Outcome: outcome(r)}
		code := out.ExitCode
		if r.Err() == nil {
			out.Source = exitcode.SourcePrebake // no driver has ended
			o.Submitted++
		} else {
			o.Failed++
			r.Message = withHintMessage(r.Message, r.Err())
			if code > o.ExitCode {
				o.ExitCode, worst, worstLine = code, r.Err(), entries[i].Line
			}
		}
		o.Results[i] = batchResult{out}
	}
	if out == outJSON {
		if err := printJSON(stdout, o); err != nil {
			return exitcode.New(exitcode.Internal, err)
		}
	} else {
		for _, r := range o.Results {
			if r.Result.Err() == nil {
				fmt.Fprintf(stdout, "line %d: submitted %s\n", r.Line, r.Result.SubmissionID)
				continue
			}
			fmt.Fprintf(stdout, "line %d: failed (exit %d) %s: %s\n", r.Line, r.ExitCode, r.Result.SubmissionID, redact.Line(r.Result.Message))
		}
	}
	if worst == nil {
		return nil
	}
	return exitcode.New(o.ExitCode, fmt.Errorf("%d of %d applications failed; the one with the highest exit code (line %d): %w", o.Failed, len(results), worstLine, worst))
}
