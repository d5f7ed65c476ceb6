package pipeline

import (
	"context"

	"github.com/prebake/prebake/submit"
)

// SubmitOptions configure Submit: Prepare's Options, and what runs
// between the steps.
type SubmitOptions struct {
	Options
	// Report, when set, sees Prepare's result (its warnings and changes)
	// before the backend runs; an error from it stops the run.
	Report func(*Result) error
	// Prepare replaces the resolve → bake → rewrite step (nil: Prepare),
	// for a caller that hands the submission on as given (tests).
	Prepare func(context.Context, *submit.Submission, Options) (*Result, error)
}

// Submit runs one submission to its end: Route (a master no backend takes
// fails before anything is resolved), Prepare (resolve → bake → rewrite),
// then be.Submit of the rewritten submission. be is the caller's backend
// for submit.Route(sub) (pipeline imports no backend and no SDK: the
// caller constructs it, e.g. k8s.New). The outcome is the backend's; it is
// nil when the run stopped before the backend.
func Submit(ctx context.Context, sub *submit.Submission, o SubmitOptions, be submit.Backend) (submit.Outcome, error) {
	p, err := PrepareSubmission(ctx, sub, o)
	if err != nil {
		return nil, err
	}
	return be.Submit(ctx, p)
}

// PrepareSubmission is Submit without the backend: Route, Prepare and
// Report, and the submit.Prepared a backend runs (the rewritten
// submission and the baked driver image's Spark version).
func PrepareSubmission(ctx context.Context, sub *submit.Submission, o SubmitOptions) (*submit.Prepared, error) {
	if _, err := submit.Route(sub); err != nil {
		return nil, err
	}
	prepare := o.Prepare
	if prepare == nil {
		prepare = Prepare
	}
	r, err := prepare(ctx, sub, o.Options)
	if err != nil {
		return nil, err
	}
	if o.Report != nil {
		if err := o.Report(r); err != nil {
			return nil, err
		}
	}
	return &submit.Prepared{Sub: r.Submission, DriverSparkVersion: r.DriverSparkVersion}, nil
}
