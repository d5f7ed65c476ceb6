package k8s

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/local"
)

// Reasons prebake sets itself (see Result).
const (
	ReasonHung         = "DriverHung" // the driver hung after SparkContext stopped
	reasonPending      = "PendingTimeout"
	reasonTimeout      = "Timeout"
	reasonCancelled    = "Cancelled"
	reasonDeleted      = "PodDeleted"
	reasonNotFound     = "PodNotFound"
	reasonUnauthorized = "Unauthorized"
	reasonUnavailable  = "APIUnavailable"
	reasonSubmitFailed = "SubmitFailed"
)

// kindCancelled is the kind when prebake itself is interrupted
// (SIGINT/SIGTERM): the driver was stopped (its pod deleted) with no exit
// code of its own, so DriverFailed (80), as the REST backend reports a
// cancel. 130 would read as a driver exit code in the conventions' table.
const kindCancelled = errdefs.DriverFailed

var errTimeout = errors.New("time limit reached")

// authRetries is how many times a 401/403 is retried with re-read
// credentials before giving up.
const authRetries = 3

// defaultAPICallTimeout bounds one API request, its body included
// (rest.Config.Timeout and a context), so an API server that trickles its
// answer fails the poll, retried for WithAPIRetryTimeout (then 69).
const defaultAPICallTimeout = 30 * time.Second

// Backend is the K8s submit.Backend (New): it submits k8s:// submissions
// with spark-submit (run by submit/local's runner), natively or through the
// operator, and polls the driver pod to its end with exactly the
// credentials the submission was given. It prints only progress (to
// WithStderr's writer); the caller renders the outcome, a *Result.
type Backend struct{ o *options }

var _ submit.Backend = (*Backend)(nil)

// New returns the K8s backend with opts, checked: a bad value or two
// options that conflict are an errdefs.BadArgument naming the option.
func New(opts ...Option) (*Backend, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Backend{o: o}, nil
}

// run returns the options of one call: a copy (a call's client is its
// own), with the environment of sub (nil: WithEnviron's) and the baked
// image's Spark version of p.
func (b *Backend) run(p *submit.Prepared) *options {
	o := *b.o
	if p != nil && p.Sub != nil {
		o.environ = p.Sub.Environ()
		if p.DriverSparkVersion != "" {
			o.imageSparkVersion = p.DriverSparkVersion
		}
	}
	return &o
}

// Submit runs p.Sub for a k8s:// master. In cluster mode spark-submit runs
// with spark.kubernetes.submission.waitAppCompletion=false and a fixed
// driver pod name (or the native submitter, or the operator, creates the
// driver), then the driver pod is polled to its end; in client mode the
// driver is spark-submit itself, whose exit code is the driver's. The
// outcome is a *Result; the error carries its kind (errdefs) and source.
func (b *Backend) Submit(ctx context.Context, p *submit.Prepared) (submit.Outcome, error) {
	return submitK8s(ctx, p.Sub, b.run(p))
}

func submitK8s(ctx context.Context, sub *submit.Submission, o *options) (*Result, error) {
	res := &Result{Backend: "k8s", Phase: "Submitting", Timings: Timings{Started: time.Now()}}
	err := runK8s(ctx, sub, o, res)
	res.finish(time.Now(), err)
	return res, err
}

func runK8s(ctx context.Context, sub *submit.Submission, o *options, res *Result) error {
	a := newK8sArgs(sub)
	if o.sparkSubmit == "" && o.via == "" && o.submitter != SubmitterNative {
		notSubmitted(res)
		return errdefs.Optionf(errdefs.BadArgument, "k8s.WithSparkSubmit", "no spark-submit: give its path, set $SPARK_HOME or put spark-submit on $PATH")
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errTimeout)
		defer cancel()
	}
	if a.deployMode() != "cluster" && o.via == "" && o.submitter != SubmitterNative {
		// Client mode: the driver is spark-submit itself, so its exit code is
		// the driver's.
		code, tail, err := runSparkSubmit(ctx, o, sub.Args())
		if err != nil {
			return errdefs.New(errdefs.BadArgument, err)
		}
		res.Phase = "Finished"
		if ctx.Err() != nil {
			return interruptedErr(ctx, res, "")
		}
		if code != 0 {
			res.LogTail = tail
		}
		res.DriverExitCode = &code
		return submit.DriverExit(code, fmt.Sprintf("spark-submit (client mode) exited with code %d", code))
	}
	creds, err := o.newCreds(a.master, a.conf)
	if err != nil {
		return err
	}
	w, err := newDriverWatch(a, creds, a.namespace(), a.driverPodName(time.Now()), o, res)
	if err != nil {
		return err
	}
	if o.via == ViaOperator {
		return w.runOperator(ctx, a, res)
	}

	extra := []string{
		"spark.kubernetes.submission.waitAppCompletion", "false",
		"spark.kubernetes.driver.pod.name", w.pod,
	}
	subArgs := a.withConf(extra...)
	objs, err := chooseSubmitter(ctx, sub, extra, o, w.progressf)
	if err != nil {
		notSubmitted(res)
		return err
	}
	if objs != nil {
		w.progressf("submitting %s natively (no spark-submit)", res.SubmissionID)
		if err := w.createNative(ctx, sub, objs); err != nil {
			if ctx.Err() != nil {
				return w.interrupted(ctx, res)
			}
			res.Reason = reasonSubmitFailed
			return err
		}
		now := w.now()
		res.Timings.Submitted = &now
		if a.noWait() || o.noWait {
			return w.submitted(res)
		}
		return w.run(ctx, res)
	}
	w.progressf("submitting %s with %s", res.SubmissionID, o.sparkSubmit)
	code, tail, err := runSparkSubmit(ctx, o, subArgs)
	if err != nil {
		return errdefs.New(errdefs.BadArgument, err)
	}
	if ctx.Err() != nil {
		return w.interrupted(ctx, res)
	}
	if code != 0 {
		res.SparkSubmitExitCode = &code
		res.LogTail = tail
		res.Reason = reasonSubmitFailed
		return sparkSubmitFailed(o.sparkSubmit, code, tail)
	}
	now := w.now()
	res.Timings.Submitted = &now
	if a.noWait() || o.noWait {
		return w.submitted(res)
	}
	return w.run(ctx, res)
}

// PhaseNotSubmitted is a Result's phase when the submission was refused
// before any object was created (a usage error): it names no pod and no
// submission ID.
const PhaseNotSubmitted = "NotSubmitted"

// notSubmitted marks res as refused before anything was created.
func notSubmitted(res *Result) {
	res.Phase, res.SubmissionID, res.Pod = PhaseNotSubmitted, "", ""
}

// PhaseSubmitted is a Result's phase when the user's
// spark.kubernetes.submission.waitAppCompletion=false ended the run once
// the driver objects existed, as spark-submit does: the exit code (0) is
// prebake's, and SubmissionID is what a status poll takes next.
const PhaseSubmitted = "Submitted"

// submitted ends a run that does not wait for the application.
func (w *driverWatch) submitted(res *Result) error {
	res.Phase = PhaseSubmitted
	w.progressf("submitted %s (not waiting for the application: spark.kubernetes.submission.waitAppCompletion=false)", res.SubmissionID)
	return nil
}

// noWait is the user's spark.kubernetes.submission.waitAppCompletion=false
// (argv, properties file or spark-defaults, parsed as Spark parses a
// boolean), not the "false" prebake gives spark-submit itself to poll on
// its own.
func (a *k8sArgs) noWait() bool {
	return strings.EqualFold(strings.TrimSpace(a.conf["spark.kubernetes.submission.waitAppCompletion"]), "false")
}

// sparkSubmitFailed classifies a failed spark-submit by its output.
func sparkSubmitFailed(bin string, code int, tail []string) error {
	out := redact.Line(strings.Join(tail, "\n"))
	ec := errdefs.BadArgument // the submission was rejected: conf or argv
	switch {
	case containsAny(out, "Forbidden", "Unauthorized", " 401", " 403"):
		ec = errdefs.Denied
	case containsAny(out, "UnknownHostException", "Connection refused", "ConnectException", "connect timed out", "SSLHandshakeException"):
		ec = errdefs.Unavailable
	}
	return errdefs.Errorf(ec, "%s exited with code %d; its last output:\n%s", bin, code, out)
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// runSparkSubmit runs spark-submit with submit/local's runner, its output
// (stdout too) streamed redacted to stderr unless quiet, and returns its
// exit code and last output lines. err is set only when it could not start.
// Its environment is exactly o's (the submission's, run): never prebake's
// own by default.
func runSparkSubmit(ctx context.Context, o *options, args []string) (int, []string, error) {
	p := &local.Process{Bin: o.sparkSubmit, Args: args, Env: append([]string{}, o.environ...), StdoutToStderr: true, KillGrace: 10 * time.Second, TailLines: 200}
	if !o.quiet {
		p.Stderr = o.stderr // redacted line by line, as the tail is (finding 10)
	}
	code, tail, err := p.Run(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("running spark-submit %s: %w", o.sparkSubmit, errors.Unwrap(err))
	}
	return code, tail, nil
}

// driverWatch polls one driver pod to its end.
type driverWatch struct {
	creds       *k8sCreds // nil: client is fixed (unit tests)
	client      kubernetes.Interface
	logs        logSource
	ns, pod     string
	container   string // driver container name; "" = spark-kubernetes-driver
	o           *options
	now         func() time.Time
	deleteGrace *int64

	lastProgress string
}

// reload builds a client from the credentials, read afresh.
func (w *driverWatch) reload() error {
	if w.creds == nil {
		return nil
	}
	if w.o.clients != nil {
		cs, err := w.o.clients.get(w.creds, w.o)
		if err != nil {
			return err
		}
		w.client = cs
		return nil
	}
	cfg, err := w.creds.Config()
	if err != nil {
		return fmt.Errorf("credentials from %s: %w", w.creds.Source(), err)
	}
	cfg.Timeout = w.o.apiCallTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("client for %s: %w", redact.URL(cfg.Host), err))
	}
	w.client = cs
	return nil
}

func (w *driverWatch) source() string {
	if w.creds == nil {
		return "the configured client"
	}
	return w.creds.Source()
}

func (w *driverWatch) progressf(format string, args ...any) {
	if w.o.quiet {
		return
	}
	fmt.Fprintf(w.o.stderr, "prebake: %s\n", redact.Line(fmt.Sprintf(format, args...))) // a server's message may quote the token
}

func (w *driverWatch) jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// pollState is what run remembers between polls.
type pollState struct {
	seen       bool
	lastPhase  corev1.PodPhase
	stuckSince time.Time
	logs       logFollower
	logErr     bool
	execOff    bool            // listing executors is not allowed
	execSeen   map[string]bool // executor pods already reported
}

// run polls the driver pod with Get every poll interval (WithPollInterval)
// until it ends. No watch is used, and completion is never inferred from an
// error.
func (w *driverWatch) run(ctx context.Context, res *Result) error {
	submitted := w.now()
	var (
		st    pollState
		retry apiRetry
	)
	for {
		getCtx, cancel := context.WithTimeout(ctx, w.o.apiCallTimeout)
		pod, err := w.client.CoreV1().Pods(w.ns).Get(getCtx, w.pod, metav1.GetOptions{})
		cancel()
		if ctx.Err() != nil {
			return w.interrupted(ctx, res)
		}
		wait := w.jitter(w.o.pollInterval)
		switch {
		case err == nil:
			retry = apiRetry{}
			st.seen = true
			if done, derr := w.observe(ctx, pod, res, &st); done {
				return derr
			}
		case apierrors.IsNotFound(err):
			retry = apiRetry{}
			if st.seen {
				res.Phase, res.Reason = "Deleted", reasonDeleted
				return errdefs.DriverError(fmt.Errorf("driver pod %s/%s was deleted while %s, before its driver container terminated", w.ns, w.pod, st.lastPhase))
			}
			if w.now().Sub(submitted) >= w.o.notFoundGrace {
				res.Phase, res.Reason = "NotFound", reasonNotFound
				return errdefs.Errorf(errdefs.NotFound, "driver pod %s/%s not found %s after spark-submit returned", w.ns, w.pod, w.o.notFoundGrace)
			}
		default:
			if wait, err = w.failed(&retry, err, "driver pod "+w.ns+"/"+w.pod, res); err != nil {
				return err
			}
		}
		if err := submit.Sleep(ctx, wait); err != nil {
			return w.interrupted(ctx, res)
		}
	}
}

// apiRetry counts the consecutive failures of a poll loop.
type apiRetry struct {
	authFails int
	errStreak int
	errSince  time.Time
}

// failed handles a failed poll of what: a 401/403 re-reads the credentials
// and is retried authRetries times (then 77); 5xx and network errors are
// retried with backoff for APIRetryTimeout (then 69). It returns the wait
// before the next poll, or the final error.
func (w *driverWatch) failed(r *apiRetry, err error, what string, res *Result) (time.Duration, error) {
	err = redact.CutError(err) // an API server's message may be megabytes long
	if isAuthError(err) {
		r.authFails++
		if why := w.creds.unsentOverHTTP(); why != "" { // re-reading sends nothing either
			res.Reason = reasonUnauthorized
			return 0, errdefs.Errorf(errdefs.Denied, "the API server refused the request (%w): %s", err, why)
		}
		if r.authFails > authRetries {
			res.Reason = reasonUnauthorized
			return 0, errdefs.Errorf(errdefs.Denied, "the API server refused the submission's credentials (%s) %d times in a row: %w", w.source(), r.authFails, err)
		}
		w.progressf("%v; re-reading credentials from %s (attempt %d of %d)", err, w.source(), r.authFails, authRetries)
		if rerr := w.reload(); rerr != nil {
			w.progressf("%v", rerr)
		}
		return time.Duration(r.authFails) * min(time.Second, w.o.pollInterval), nil
	}
	r.authFails = 0
	r.errStreak++
	if r.errSince.IsZero() {
		r.errSince = w.now()
	}
	if w.now().Sub(r.errSince) >= w.o.apiRetryTimeout {
		res.Reason = reasonUnavailable
		return 0, errdefs.Errorf(errdefs.Unavailable, "API server unavailable for %s (%d failed polls of %s): %w", w.o.apiRetryTimeout, r.errStreak, what, err)
	}
	w.progressf("polling %s: %v (retrying)", what, err)
	back := time.Duration(250*(1<<min(r.errStreak, 8))) * time.Millisecond
	return w.jitter(min(back, w.o.pollInterval)), nil
}

func isAuthError(err error) bool {
	return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) || errors.Is(err, errCredentials)
}

// driverStatus returns the driver container's status, or nil.
func (w *driverWatch) driverStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	name := w.driverContainer(pod)
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// containers is the pod's container results with the driver container
// marked.
func (w *driverWatch) containers(pod *corev1.Pod) []ContainerResult {
	cs := containerResults(pod)
	name := w.driverContainer(pod)
	for i := range cs {
		cs[i].Driver = !cs[i].Init && cs[i].Name == name
	}
	return cs
}

func (w *driverWatch) driverContainer(pod *corev1.Pod) string {
	name := w.container
	if name == "" {
		name = "spark-kubernetes-driver"
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return name
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Name
	}
	return name
}

// observe looks at one Get of the pod; done reports the end of the run.
func (w *driverWatch) observe(ctx context.Context, pod *corev1.Pod, res *Result, st *pollState) (bool, error) {
	now := w.now()
	st.lastPhase = pod.Status.Phase
	res.Phase = string(pod.Status.Phase)
	cs := w.driverStatus(pod)
	w.reportProgress(pod, cs)
	if pod.Status.Phase != corev1.PodPending {
		w.checkExecutors(ctx, pod, res, st)
	}

	// The driver container's own result, as spark-operator reads it:
	// sidecars may keep the pod Running after the driver ended.
	if cs != nil && cs.State.Terminated != nil {
		t := cs.State.Terminated
		code := int(t.ExitCode)
		res.DriverExitCode, res.Reason = &code, t.Reason
		res.Containers = w.containers(pod)
		res.setDriverEnd(pod, cs)
		msg := fmt.Sprintf("driver container %s terminated with exit code %d", cs.Name, code)
		if t.Reason != "" {
			msg += " (" + t.Reason + ")"
		}
		if e := explainExit(code, t.Reason); e != "" {
			msg += ": " + e
		}
		if code != 0 {
			if e := res.driverEndSummary(); e != "" {
				msg += "; the driver: " + e
			}
		}
		res.Message = msg
		err := submit.DriverExit(code, msg)
		if err != nil {
			res.Message = err.Error()
			w.fillLogTail(ctx, pod, res)
		}
		return true, err
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		res.Containers = w.containers(pod)
		zero := 0
		res.DriverExitCode, res.Reason = &zero, "Completed"
		res.Message = "driver pod succeeded"
		return true, nil
	case corev1.PodFailed:
		res.Containers = w.containers(pod)
		res.setDriverEnd(pod, cs)
		res.Reason = pod.Status.Reason
		if res.Reason == "" {
			res.Reason = "Failed"
		}
		w.fillLogTail(ctx, pod, res)
		detail := submit.OneLine(redact.Message(pod.Status.Message))
		if e := res.driverEndSummary(); e != "" {
			detail += "; the driver: " + e
		}
		return true, errdefs.DriverError(fmt.Errorf("driver pod %s/%s failed (%s) with no driver container exit code: %s", w.ns, w.pod, res.Reason, detail))
	}
	if cs != nil && cs.State.Running != nil {
		if res.Timings.Running == nil {
			res.Timings.Running = &now
		}
		st.stuckSince = time.Time{}
		return w.followLogs(ctx, pod, res, st)
	}
	if pod.DeletionTimestamp != nil {
		return false, nil // being deleted: wait for the container's end or the pod's removal
	}
	reason, msg := stuckReason(pod, cs)
	if st.stuckSince.IsZero() {
		st.stuckSince = now
	}
	if w.o.pendingTimeout > 0 && now.Sub(st.stuckSince) >= w.o.pendingTimeout {
		res.Reason = reason
		if res.Reason == "" {
			res.Reason = reasonPending
		}
		res.Containers = w.containers(pod)
		detail := res.Reason
		if msg != "" {
			detail += ": " + submit.OneLine(redact.Message(msg))
		}
		err := fmt.Errorf("driver pod %s/%s stuck in %s for %s, the pending time limit: %s", w.ns, w.pod, pod.Status.Phase, w.o.pendingTimeout, detail)
		if w.o.killOnCancel {
			err = fmt.Errorf("%w; %s", err, w.kill())
		}
		return true, errdefs.New(errdefs.Timeout, &errdefs.OptionError{Option: "k8s.WithPendingTimeout", Err: err})
	}
	return false, nil
}

// checkExecutors records executor pods of the driver's application whose
// container ended with a non-zero code (they are usually deleted soon after,
// so this runs on every poll).
func (w *driverWatch) checkExecutors(ctx context.Context, driver *corev1.Pod, res *Result, st *pollState) {
	app := driver.Labels["spark-app-selector"]
	if st.execOff || app == "" {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, w.o.apiCallTimeout)
	defer cancel()
	list, err := w.client.CoreV1().Pods(w.ns).List(lctx, metav1.ListOptions{LabelSelector: "spark-role=executor,spark-app-selector=" + app})
	if err != nil {
		if isAuthError(err) {
			st.execOff = true
			w.progressf("not reporting executor failures: listing pods is not allowed (%v)", err)
		}
		return
	}
	for _, p := range list.Items {
		if st.execSeen[p.Name] {
			continue
		}
		f := ExecutorFailure{Pod: p.Name, ExecutorID: p.Labels["spark-exec-id"]}
		for _, c := range p.Status.ContainerStatuses {
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 && (c.Name == "spark-kubernetes-executor" || f.ExitCode == nil) {
				code := int(t.ExitCode)
				f.ExitCode, f.Reason, f.Explanation = &code, t.Reason, explainExecutorExit(code, t.Reason)
			}
		}
		if f.ExitCode == nil && p.Status.Phase == corev1.PodFailed {
			f.Reason, f.Explanation = p.Status.Reason, submit.OneLine(redact.Message(p.Status.Message))
		}
		if f.ExitCode == nil && f.Reason == "" {
			continue
		}
		if st.execSeen == nil {
			st.execSeen = map[string]bool{}
		}
		st.execSeen[p.Name] = true
		res.ExecutorFailures = append(res.ExecutorFailures, f)
		code := "no exit code"
		if f.ExitCode != nil {
			code = fmt.Sprintf("exit code %d", *f.ExitCode)
		}
		w.progressf("executor %s (%s) failed: %s (%s)", f.ExecutorID, p.Name, code, f.Explanation)
	}
}

// stuckReason names why a pod is not running: a waiting container's reason
// (ImagePullBackOff, ErrImagePull, CreateContainerConfigError,
// CrashLoopBackOff, ...) or PodScheduled=False (Unschedulable).
func stuckReason(pod *corev1.Pod, driver *corev1.ContainerStatus) (string, string) {
	if driver != nil && driver.State.Waiting != nil && driver.State.Waiting.Reason != "" && driver.State.Waiting.Reason != "ContainerCreating" && driver.State.Waiting.Reason != "PodInitializing" {
		return driver.State.Waiting.Reason, driver.State.Waiting.Message
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if s.State.Waiting != nil && s.State.Waiting.Reason != "" && s.State.Waiting.Reason != "PodInitializing" {
			return s.State.Waiting.Reason, "init container " + s.Name + ": " + s.State.Waiting.Message
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return c.Reason, c.Message
		}
	}
	if driver != nil && driver.State.Waiting != nil && driver.State.Waiting.Reason != "" {
		return driver.State.Waiting.Reason, driver.State.Waiting.Message
	}
	return "", ""
}

func (w *driverWatch) reportProgress(pod *corev1.Pod, cs *corev1.ContainerStatus) {
	state := string(pod.Status.Phase)
	if cs != nil {
		switch {
		case cs.State.Waiting != nil:
			state += " (" + cs.State.Waiting.Reason + ")"
		case cs.State.Running != nil:
			state += " (driver running)"
		}
	} else if r, _ := stuckReason(pod, nil); r != "" {
		state += " (" + r + ")"
	}
	if state != w.lastProgress {
		w.lastProgress = state
		w.progressf("driver %s:%s %s", w.ns, w.pod, state)
	}
}

// followLogs reads the new part of the driver log and detects a driver
// that hangs after SparkContext stopped.
func (w *driverWatch) followLogs(ctx context.Context, pod *corev1.Pod, res *Result, st *pollState) (bool, error) {
	lctx, cancel := context.WithTimeout(ctx, w.o.apiCallTimeout)
	data, err := w.logs.ContainerLog(lctx, w.ns, w.pod, w.driverContainer(pod), st.logs.query())
	cancel()
	now := w.now()
	if err != nil {
		if !st.logErr && ctx.Err() == nil {
			st.logErr = true
			w.progressf("cannot follow the driver log (hung-driver detection is off until it can): %v", err)
		}
	} else {
		st.logErr = false
		for _, l := range st.logs.feed(data, now) {
			if w.o.verbose {
				fmt.Fprintf(w.o.stderr, "driver| %s\n", redact.Line(l))
			}
		}
	}
	f := &st.logs
	if f.marker == "" || now.Sub(f.markerAt) < w.o.hungGrace {
		return false, nil
	}
	res.Reason = ReasonHung
	res.Containers = w.containers(pod)
	msg := fmt.Sprintf("driver hung after SparkContext stopped: %q was logged, and the driver container was still running %s later", f.marker, now.Sub(f.markerAt).Round(time.Second))
	if w.o.killHungDriver {
		msg += "; " + w.kill()
	} else {
		msg += "; the driver pod was left running"
	}
	if f.mainThrew != "" {
		msg += "; main threw: " + submit.OneLine(redact.Line(f.mainThrew))
	}
	res.Message = msg
	w.fillLogTail(ctx, pod, res)
	w.progressf("%s", msg)
	err = errdefs.Errorf(errdefs.Hung, "%s", msg)
	if code := f.appExitCode(); code != nil {
		res.DriverExitCode = code
		err = submit.DriverExit(*code, msg+fmt.Sprintf(" (SparkContext reported exit code %d)", *code))
	}
	if !w.o.killHungDriver {
		err = &errdefs.OptionError{Option: "k8s.WithKillHungDriver", Err: err} // it says why the pod was left running
	}
	return true, err
}

func (w *driverWatch) fillLogTail(ctx context.Context, pod *corev1.Pod, res *Result) {
	if w.o.logTail <= 0 || w.logs == nil {
		return
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.o.apiCallTimeout)
	defer cancel()
	data, err := w.logs.ContainerLog(lctx, w.ns, w.pod, w.driverContainer(pod), logQuery{Tail: int64(w.o.logTail)})
	if err != nil {
		w.progressf("driver log unavailable: %v", err)
		return
	}
	res.LogTail = lastLines(data, w.o.logTail)
}

// kill deletes the driver pod (best effort, bounded) and describes what
// happened.
func (w *driverWatch) kill() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*w.o.apiCallTimeout)
	defer cancel()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = w.client.CoreV1().Pods(w.ns).Delete(ctx, w.pod, metav1.DeleteOptions{GracePeriodSeconds: w.deleteGrace})
		if err == nil || apierrors.IsNotFound(err) {
			return fmt.Sprintf("driver pod %s/%s deleted", w.ns, w.pod)
		}
		if submit.Sleep(ctx, time.Second) != nil {
			break
		}
	}
	return fmt.Sprintf("deleting driver pod %s/%s failed: %v", w.ns, w.pod, err)
}

// interrupted ends a run whose context is done: WithTimeout
// (errdefs.Timeout) or a signal (errdefs.DriverFailed). With
// WithKillOnCancel(true) the driver pod is deleted.
func (w *driverWatch) interrupted(ctx context.Context, res *Result) error {
	extra := ""
	if w.o.killOnCancel {
		extra = w.kill()
	}
	return interruptedErr(ctx, res, extra)
}

func interruptedErr(ctx context.Context, res *Result, extra string) error {
	what, code, option := "cancelled", kindCancelled, ""
	res.Reason = reasonCancelled
	if errors.Is(context.Cause(ctx), errTimeout) {
		what, code, option = "time limit reached", errdefs.Timeout, "k8s.WithTimeout"
		res.Reason = reasonTimeout
	}
	if extra != "" {
		what += "; " + extra
	}
	if option != "" {
		return errdefs.Optionf(code, option, "%s", what)
	}
	return errdefs.Errorf(code, "%s", what)
}

// ParseGracePeriod reads spark.kubernetes.appKillPodDeletionGracePeriod:
// seconds, with or without an "s" suffix.
func ParseGracePeriod(v string) (int64, error) {
	return strconv.ParseInt(strings.TrimSuffix(v, "s"), 10, 64)
}
