package k8s

import (
	"context"
	"io"
	"testing"

	"github.com/prebake/prebake/submit"
)

// The tests' shorthands: one call of a Backend made of opts, returning the
// concrete types (New checks opts as the callers' New does).

func mustOptions(t testing.TB, opts ...Option) *options {
	t.Helper()
	o, err := makeOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func backendWith(opts []Option) (*Backend, error) { return New(opts...) }

func submitWith(ctx context.Context, sub *submit.Submission, opts ...Option) (*Result, error) {
	b, err := backendWith(opts)
	if err != nil {
		return nil, err
	}
	return submitK8s(ctx, sub, b.run(&submit.Prepared{Sub: sub}))
}

func attachWith(ctx context.Context, id string, sub *submit.Submission, opts ...Option) (*Result, error) {
	b, err := backendWith(opts)
	if err != nil {
		return nil, err
	}
	return attachK8s(ctx, id, sub, b.run(&submit.Prepared{Sub: sub}))
}

func statusWith(ctx context.Context, master, id string, opts ...Option) ([]DriverStatus, error) {
	b, err := backendWith(append(opts, WithMaster(master)))
	if err != nil {
		return nil, err
	}
	return statusK8s(ctx, id, b.run(nil))
}

func killWith(ctx context.Context, master, id string, opts ...Option) ([]DriverStatus, error) {
	b, err := backendWith(append(opts, WithMaster(master)))
	if err != nil {
		return nil, err
	}
	return killK8s(ctx, id, b.run(nil))
}

// dryRunWith writes DryRun's objects as YAML, as the CLI prints them.
func dryRunWith(sub *submit.Submission, w io.Writer, opts ...Option) error {
	b, err := backendWith(opts)
	if err != nil {
		return err
	}
	objs, err := b.DryRun(context.Background(), &submit.Prepared{Sub: sub})
	if err != nil {
		return err
	}
	y, err := objs.YAML()
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

func submitBatchWith(ctx context.Context, apps []*submit.Prepared, parallel int, opts ...Option) ([]*Result, error) {
	b, err := backendWith(opts)
	if err != nil {
		return nil, err
	}
	return b.SubmitBatch(ctx, apps, parallel)
}
