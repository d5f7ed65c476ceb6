package k8s

import (
	"context"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s/native"
)

// Attach follows a driver pod that was submitted elsewhere (id is
// namespace:pod, or pod in the credentials' namespace) to its end, exactly
// as Submit follows its own: it never runs spark-submit nor creates
// anything. p.Sub is read only for the master and the credentials conf
// (spark.kubernetes.authenticate.submission.*, spark.kubernetes.context,
// spark.kubernetes.namespace). A pod that is not there within the grace of
// WithNotFoundGrace is NotFound. The outcome is a *Result.
func (b *Backend) Attach(ctx context.Context, id string, p *submit.Prepared) (submit.Outcome, error) {
	return attachK8s(ctx, id, p.Sub, b.run(p))
}

func attachK8s(ctx context.Context, id string, sub *submit.Submission, o *options) (*Result, error) {
	res := &Result{Backend: "k8s", Phase: "Attaching", Timings: submit.Timings{Started: time.Now()}}
	err := attach(ctx, id, sub, o, res)
	res.finish(time.Now(), err)
	return res, err
}

func attach(ctx context.Context, id string, sub *submit.Submission, o *options, res *Result) error {
	a := newK8sArgs(sub)
	ns, pod, ok := strings.Cut(id, ":")
	if !ok {
		ns, pod = a.conf["spark.kubernetes.namespace"], id
	}
	if pod == "" || strings.ContainsAny(id, "*/") || (ok && ns == "") {
		return errdefs.Optionf(errdefs.BadArgument, "k8s.Attach.id", "submission %q: expected namespace:driver-pod or driver-pod (one submission; globs are for prebake status)", id)
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errTimeout)
		defer cancel()
	}
	creds, err := o.newCreds(a.master, a.conf)
	if err != nil {
		return err
	}
	if ns == "" {
		ns = creds.Namespace()
	}
	w, err := newDriverWatch(a, creds, ns, pod, o, res)
	if err != nil {
		return err
	}
	w.progressf("attaching to %s (nothing is submitted)", res.SubmissionID)
	return w.run(ctx, res)
}

// newDriverWatch builds the poller of driver pod ns/pod with the
// submission's credentials, and names the submission in res.
func newDriverWatch(a *k8sArgs, creds *k8sCreds, ns, pod string, o *options, res *Result) (*driverWatch, error) {
	if err := native.CheckNamespace(ns); err != nil {
		return nil, errdefs.New(errdefs.BadArgument, err)
	}
	w := &driverWatch{
		creds: creds, ns: ns, pod: pod,
		container: a.conf["spark.kubernetes.driver.podTemplateContainerName"],
		o:         o, now: time.Now,
	}
	if g := a.conf["spark.kubernetes.appKillPodDeletionGracePeriod"]; g != "" {
		if n, err := ParseGracePeriod(g); err == nil {
			w.deleteGrace = &n
		}
	}
	if err := w.reload(); err != nil {
		res.Reason = reasonUnauthorized
		return nil, errdefs.New(credsKind(err), err)
	}
	w.logs = apiLogs{client: func() kubernetes.Interface { return w.client }}
	res.Namespace, res.Pod, res.SubmissionID = w.ns, w.pod, w.ns+":"+w.pod
	return w, nil
}
