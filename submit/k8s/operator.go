package k8s

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// sparkAppGVR is kubeflow spark-operator's SparkApplication.
var sparkAppGVR = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}

// sparkApplication maps a (rewritten) spark-submit argv to a SparkApplication
// (spark-semantics §5): the jars go to spec.deps.jars, the Spark conf to
// spec.sparkConf without the client-side submission credentials, and
// waitAppCompletion/driver pod naming are left to the operator.
func sparkApplication(a *k8sArgs, name, sparkVersion string) (*unstructured.Unstructured, error) {
	resource, ok := a.sub.Primary()
	if !ok {
		return nil, fmt.Errorf("no application resource in the spark-submit arguments")
	}
	// The value options other than --conf, the last one of each.
	opts := map[string]string{}
	for _, o := range a.sub.Argv.Options {
		if !o.Switch() && o.Name != "--conf" {
			opts[o.Name] = o.Value
		}
	}
	appType := "Scala"
	switch strings.ToLower(path.Ext(resource)) {
	case ".py":
		appType = "Python"
	case ".r":
		appType = "R"
	}
	conf := map[string]any{}
	for k, v := range a.conf {
		if strings.HasPrefix(k, "spark.kubernetes.authenticate.submission.") || k == confContext ||
			k == "spark.kubernetes.submission.waitAppCompletion" {
			continue
		}
		conf[k] = v
	}
	driver := map[string]any{}
	executor := map[string]any{}
	setRes := func(m map[string]any, key, v string, asInt bool) {
		if v == "" {
			return
		}
		if asInt {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				m[key] = n
			}
			return
		}
		m[key] = v
	}
	setRes(driver, "cores", opts["--driver-cores"], true)
	setRes(driver, "memory", opts["--driver-memory"], false)
	setRes(driver, "serviceAccount", a.conf["spark.kubernetes.authenticate.driver.serviceAccountName"], false)
	setRes(executor, "cores", opts["--executor-cores"], true)
	setRes(executor, "memory", opts["--executor-memory"], false)
	setRes(executor, "instances", opts["--num-executors"], true)
	spec := map[string]any{
		"type": appType, "mode": "cluster", "sparkVersion": sparkVersion,
		"mainApplicationFile": resource,
		"restartPolicy":       map[string]any{"type": "Never"},
		"driver":              driver, "executor": executor,
	}
	if img := a.conf["spark.kubernetes.container.image"]; img != "" {
		spec["image"] = img
	}
	if c := a.sub.MainClass(); c != "" {
		spec["mainClass"] = c
	}
	if args := a.sub.AppArgs(); len(args) > 0 {
		spec["arguments"] = toAny(args)
	}
	if len(conf) > 0 {
		spec["sparkConf"] = conf
	}
	deps := map[string]any{}
	for opt, key := range map[string]string{
		"--jars": "jars", "--files": "files", "--py-files": "pyFiles", "--archives": "archives",
		"--packages": "packages", "--exclude-packages": "excludePackages", "--repositories": "repositories",
	} {
		if v := opts[opt]; v != "" {
			deps[key] = toAny(strings.Split(v, ","))
		}
	}
	if len(deps) > 0 {
		spec["deps"] = deps
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
		"metadata": map[string]any{"name": name, "namespace": a.namespace(), "labels": map[string]any{"app.kubernetes.io/managed-by": "prebake"}},
		"spec":     spec,
	}}
	return u, nil
}

// operatorSparkVersion is the SparkApplication's spec.sparkVersion: the
// driver's Spark version when given (WithDriverSparkVersion), else the one the
// baked image's jars say, else WithOperatorSparkVersion's (3.5.3 by
// default). The operator only labels the driver with it.
func operatorSparkVersion(o *options) string {
	for _, v := range []string{o.driverSparkVersion, o.imageSparkVersion} {
		if v != "" {
			return v
		}
	}
	return o.sparkVersion
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// runOperator creates the SparkApplication and polls
// status.applicationState until COMPLETED or FAILED. A failed application's
// exit code is the driver container's when its pod is still there.
func (w *driverWatch) runOperator(ctx context.Context, a *k8sArgs, res *Result) error {
	name := w.pod // the generated name, without the -driver suffix
	name = strings.TrimSuffix(name, "-driver")
	if len(name) > 63 {
		name = strings.Trim(name[len(name)-63:], "-")
	}
	app, err := sparkApplication(a, name, operatorSparkVersion(w.o))
	if err != nil {
		return errdefs.New(errdefs.BadArgument, err)
	}
	dyn := func() (dynamic.ResourceInterface, error) {
		cfg, err := w.creds.Config()
		if err != nil {
			return nil, err
		}
		cfg.Timeout = w.o.apiCallTimeout
		c, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return c.Resource(sparkAppGVR).Namespace(w.ns), nil
	}
	client, err := dyn()
	if err != nil {
		res.Reason = reasonUnauthorized
		return errdefs.New(errdefs.Denied, fmt.Errorf("credentials from %s: %w", w.source(), err))
	}
	res.Pod, res.SubmissionID = "", w.ns+":"+name
	w.progressf("creating SparkApplication %s/%s", w.ns, name)
	cctx, cancel := context.WithTimeout(ctx, w.o.apiCallTimeout)
	_, err = client.Create(cctx, app, metav1.CreateOptions{})
	cancel()
	if err != nil {
		res.Reason = reasonSubmitFailed
		return apiError("creating SparkApplication "+w.ns+"/"+name, err)
	}
	now := w.now()
	res.Timings.Submitted = &now
	kill := func() string {
		dctx, cancel := context.WithTimeout(context.Background(), w.o.apiCallTimeout)
		defer cancel()
		if err := client.Delete(dctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Sprintf("deleting SparkApplication %s/%s failed: %v", w.ns, name, err)
		}
		return fmt.Sprintf("SparkApplication %s/%s deleted", w.ns, name)
	}
	var (
		retry      apiRetry
		lastState  string
		stuckSince = now
	)
	for {
		gctx, cancel := context.WithTimeout(ctx, w.o.apiCallTimeout)
		u, err := client.Get(gctx, name, metav1.GetOptions{})
		cancel()
		if ctx.Err() != nil {
			extra := ""
			if w.o.killOnCancel {
				extra = kill()
			}
			return interruptedErr(ctx, res, extra)
		}
		wait := w.jitter(w.o.pollInterval)
		switch {
		case err == nil:
			retry = apiRetry{}
			state, _, _ := unstructured.NestedString(u.Object, "status", "applicationState", "state")
			msg, _, _ := unstructured.NestedString(u.Object, "status", "applicationState", "errorMessage")
			msg = redact.Message(msg) // the operator's: it may quote a secret, and be megabytes long
			if pod, _, _ := unstructured.NestedString(u.Object, "status", "driverInfo", "podName"); pod != "" {
				w.pod, res.Pod = pod, pod
			}
			res.Phase = state
			if state != lastState {
				lastState = state
				w.progressf("SparkApplication %s/%s: %s", w.ns, name, submit.OrNA(state))
			}
			switch state {
			case "COMPLETED":
				zero := 0
				res.DriverExitCode, res.Reason = &zero, "Completed"
				w.operatorDriver(ctx, res)
				return nil
			case "FAILED", "SUBMISSION_FAILED":
				res.Reason, res.Message = state, msg
				return w.operatorFailure(ctx, state, msg, res)
			case "", "SUBMITTED", "PENDING_RERUN":
				if w.o.pendingTimeout > 0 && w.now().Sub(stuckSince) >= w.o.pendingTimeout {
					res.Reason = reasonPending
					err := fmt.Errorf("SparkApplication %s/%s still %s after %s, the pending time limit", w.ns, name, submit.OrNA(state), w.o.pendingTimeout)
					if w.o.killOnCancel {
						err = fmt.Errorf("%w; %s", err, kill())
					}
					return errdefs.New(errdefs.Timeout, &errdefs.OptionError{Option: "k8s.WithPendingTimeout", Err: err})
				}
			default:
				stuckSince = w.now()
				if res.Timings.Running == nil && state == "RUNNING" {
					t := w.now()
					res.Timings.Running = &t
				}
			}
		case apierrors.IsNotFound(err):
			res.Phase, res.Reason = "Deleted", reasonDeleted
			return errdefs.DriverError(fmt.Errorf("SparkApplication %s/%s was deleted before it completed", w.ns, name))
		default:
			if wait, err = w.failed(&retry, err, "SparkApplication "+w.ns+"/"+name, res); err != nil {
				return err
			}
			if c, derr := dyn(); derr == nil {
				client = c
			}
		}
		if err := submit.Sleep(ctx, wait); err != nil {
			extra := ""
			if w.o.killOnCancel {
				extra = kill()
			}
			return interruptedErr(ctx, res, extra)
		}
	}
}

// operatorDriver reads the driver pod the SparkApplication names, when it
// is still there: its containers go to the result and its driver
// container's terminated state, if any, is returned.
func (w *driverWatch) operatorDriver(ctx context.Context, res *Result) *corev1.ContainerStateTerminated {
	if res.Pod == "" {
		return nil
	}
	gctx, cancel := context.WithTimeout(ctx, w.o.apiCallTimeout)
	pod, err := w.client.CoreV1().Pods(w.ns).Get(gctx, res.Pod, metav1.GetOptions{})
	cancel()
	if err != nil {
		return nil
	}
	res.Containers = w.containers(pod)
	if cs := w.driverStatus(pod); cs != nil && cs.State.Terminated != nil {
		res.setDriverEnd(pod, cs)
		if cs.State.Terminated.ExitCode != 0 {
			w.fillLogTail(ctx, pod, res)
		}
		return cs.State.Terminated
	}
	return nil
}

// operatorFailure gives a FAILED SparkApplication the driver container's
// exit code: from the driver pod when it is still there, else from the
// operator's errorMessage ("driver container failed with ExitCode: 3,
// Reason: Error", spark-operator v2). Without either (SUBMISSION_FAILED, a
// driver pod that never started) the failure has no exit code (80).
func (w *driverWatch) operatorFailure(ctx context.Context, state, msg string, res *Result) error {
	if term := w.operatorDriver(ctx, res); term != nil {
		code := int(term.ExitCode)
		res.DriverExitCode = &code
		detail := ""
		if e := res.driverEndSummary(); e != "" {
			detail = "; the driver: " + e
		}
		if err := submit.DriverExit(code, fmt.Sprintf("SparkApplication %s: driver container exited with code %d (%s)%s", state, code, term.Reason, detail)); err != nil {
			return err
		}
	} else if code, ok := operatorExitCode(msg); ok && state == "FAILED" {
		res.DriverExitCode = &code
		if err := submit.DriverExit(code, fmt.Sprintf("SparkApplication %s: %s", state, msg)); err != nil {
			return err
		}
	}
	return errdefs.DriverError(fmt.Errorf("SparkApplication %s %s: %s", res.SubmissionID, state, submit.OrNA(msg)))
}

// operatorExitCodeRE is the exit code in the errorMessage spark-operator v2
// writes for a failed driver container.
var operatorExitCodeRE = regexp.MustCompile(`driver container failed with ExitCode: (-?[0-9]+)`)

// operatorExitCode reads the driver's exit code from a SparkApplication's
// status.applicationState.errorMessage.
func operatorExitCode(msg string) (int, bool) {
	m := operatorExitCodeRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false
	}
	return n, true
}
