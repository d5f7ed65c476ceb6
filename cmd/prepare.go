package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// prepareFunc is submit's resolve → bake → rewrite step: pipeline.Prepare,
// or a pass-through in tests (withPrepare).
type prepareFunc func(ctx context.Context, sub *submit.Submission, o pipeline.Options) (*pipeline.Result, error)

// submitOptions maps submit's flags (with prebake.yaml and PREBAKE_*
// applied by the root's loader) onto pipeline.SubmitOptions for sub (loaded
// once by the caller): Prepare's options, checked; the step pp; and the
// report of its warnings on rep, which ends rep's bars before the backend
// runs.
func submitOptions(ctx context.Context, f *submitFlags, sub *submit.Submission, pp prepareFunc, rep *progress.Reporter) (pipeline.SubmitOptions, error) {
	if f.s3.store != "" && f.imageTarget != "" {
		return pipeline.SubmitOptions{}, exitcode.Errorf(exitcode.Usage, "--store %s and --image-target %s: give one of them", redact.URL(f.s3.store), f.imageTarget)
	}
	if err := needClusterTarget(ctx, f, sub); err != nil {
		return pipeline.SubmitOptions{}, err
	}
	req, err := f.resolve.request()
	if err != nil {
		return pipeline.SubmitOptions{}, err
	}
	o := pipeline.Options{Request: req, CacheDir: f.resolve.cache, Reporter: rep,
		LocalSparkJars: f.localSparkJars, Strict: f.strict.on, StrictKinds: f.strict.kinds, Memo: f.memo, RewriteOptions: f.rewriteOptions}
	if o.Target, err = submitTarget(f, rep); err != nil {
		return pipeline.SubmitOptions{}, err
	}
	if o.Python, err = pythonShip(ctx, &f.resolve, sub, "", func() ([]layers.Option, error) { return f.registry.options(rep) }, rep); err != nil {
		return pipeline.SubmitOptions{}, err
	}
	fromLock := lockMatches(ctx, req, sub.Packages())
	report := func(r *pipeline.Result) error {
		defer rep.Wait()
		if isS3Store(f.s3.store) && f.urlStyle == s3store.StylePresigned {
			presignedAlert(rep, f.expires)
		}
		reportPrepared(rep, r)
		if line := resolutionSummary(r.Result, req.LockPath, fromLock); line != "" {
			rep.Printf("%s", line)
		}
		return nil
	}
	return pipeline.SubmitOptions{Options: o, Report: report, Prepare: pp}, nil
}

// reportPrepared reports Prepare's warnings (with the CLI's hints) and,
// with -v, its changes.
func reportPrepared(rep *progress.Reporter, r *pipeline.Result) {
	withWarningHints("submit", r.Warnings)
	for _, w := range r.Warnings {
		// The library's fix names rewrite; the user ran submit.
		w.Text = strings.ReplaceAll(w.Text, "(prebake rewrite ", "(prebake submit ")
		if w.Kind == rewrite.WarnClasspath {
			// A Scala or Spark mismatch changes the outcome: -q does not
			// hide it.
			rep.Alertf("%s", w)
			continue
		}
		rep.Warnf("%s", w)
	}
	for _, ch := range r.Changes {
		rep.Debugf("rewrite: %s %s (%s)", ch.Action, ch.Target, ch.Reason)
	}
}

// prepareErr names the flag of an error of the prepare step.
func prepareErr(f *submitFlags, err error) error {
	if errors.Is(err, pipeline.ErrNoBaseImage) {
		return exitcode.New(exitcode.Usage, fmt.Errorf("--image-target %s: %w", f.imageTarget, err))
	}
	return err
}

// prepare is submit's resolve → bake (S3 or image) → rewrite of sub alone
// (pipeline.PrepareSubmission, for a batch's lines): the rewritten
// submission to run and the Spark version of the driver's baked image.
func prepare(ctx context.Context, g *globals, f *submitFlags, pp prepareFunc, sub *submit.Submission, stderr io.Writer) (*submit.Prepared, error) {
	rep := g.reporter(stderr)
	defer rep.Wait()
	so, err := submitOptions(ctx, f, sub, pp, rep)
	if err != nil {
		return nil, err
	}
	p, err := pipeline.PrepareSubmission(ctx, sub, so)
	return p, prepareErr(f, err)
}
