package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// prepare is submit's resolve → bake (S3 or image) → rewrite: it maps the
// flags (with prebake.yaml and PREBAKE_* applied by the root's loader) onto
// pipeline.Options, runs pipeline.Prepare of sub (loaded once by the
// caller) and reports its warnings. It returns the rewritten submission to
// run and the Spark version of the driver's baked image.
func prepare(ctx context.Context, g *globals, f *submitFlags, fl *pflag.FlagSet, sub *submit.Submission, stderr io.Writer) (*prepared, error) {
	rep := g.reporter(stderr)
	defer rep.Wait()
	if f.s3.store != "" && f.imageTarget != "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--store %s and --image-target %s: give one of them", redact.URL(f.s3.store), f.imageTarget)
	}
	if err := needClusterTarget(ctx, f, sub); err != nil {
		return nil, err
	}
	req, err := f.resolve.request()
	if err != nil {
		return nil, err
	}
	o := pipeline.Options{Request: req, CacheDir: f.resolve.cache, Reporter: rep,
		LocalSparkJars: f.localSparkJars, Strict: f.strict, Memo: f.memo, RewriteOptions: f.rewriteOptions}
	if o.Target, err = submitTarget(f, rep); err != nil {
		return nil, err
	}
	r, err := pipeline.Prepare(ctx, sub, o)
	if errors.Is(err, pipeline.ErrNoBaseImage) {
		return nil, exitcode.New(exitcode.Usage, fmt.Errorf("--image-target %s: %w", f.imageTarget, err))
	}
	if err != nil {
		return nil, err
	}
	if isS3Store(f.s3.store) && f.urlStyle == s3store.StylePresigned {
		presignedAlert(rep, f.expires)
	}
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
	return &prepared{Sub: r.Submission, ImageSparkVersion: r.DriverSparkVersion}, nil
}
