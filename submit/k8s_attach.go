package submit

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/internal/exitcode"
)

// AttachK8s follows a driver pod that was submitted elsewhere (id is
// namespace:pod, or pod in the credentials' namespace) to its end, exactly
// as SubmitK8s follows its own: it never runs spark-submit nor creates
// anything. args are the spark-submit arguments, read only for --master and
// the credentials conf (spark.kubernetes.authenticate.submission.*,
// spark.kubernetes.context, spark.kubernetes.namespace). A pod that is not
// there within NotFoundGrace exits 66. The result is printed as SubmitK8s
// prints it.
func AttachK8s(ctx context.Context, id string, args []string, o K8sOptions) (*K8sResult, error) {
	o.defaults()
	res := &K8sResult{Backend: "k8s", Phase: "Attaching", Timings: Timings{Started: time.Now()}}
	return res, res.print(&o, attachK8s(ctx, id, args, &o, res))
}

func attachK8s(ctx context.Context, id string, args []string, o *K8sOptions, res *K8sResult) error {
	a, err := parseK8sArgsWithDefaults(args, o)
	if err != nil {
		return err
	}
	ns, pod, ok := strings.Cut(id, ":")
	if !ok {
		ns, pod = a.conf["spark.kubernetes.namespace"], id
	}
	if pod == "" || strings.ContainsAny(id, "*/") || (ok && ns == "") {
		return exitcode.Errorf(exitcode.Usage, "--status-poll-only %q: expected namespace:driver-pod or driver-pod (one submission; globs are for prebake status)", id)
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, errTimeout)
		defer cancel()
	}
	creds, err := newK8sCreds(a.master, a.conf, o.Getenv, o.InClusterDir)
	if err != nil {
		return exitcode.New(exitcode.Usage, err)
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

// parseK8sArgsWithDefaults parses a spark-submit argv and fills its conf
// from the properties file or spark-defaults.conf, as spark-submit does.
func parseK8sArgsWithDefaults(args []string, o *K8sOptions) (*k8sArgs, error) {
	a, err := parseK8sArgs(args)
	if err != nil {
		return nil, exitcode.New(exitcode.Usage, err)
	}
	confDir := o.Getenv("SPARK_CONF_DIR")
	if confDir == "" && o.Getenv("SPARK_HOME") != "" {
		confDir = filepath.Join(o.Getenv("SPARK_HOME"), "conf")
	}
	if err := a.withDefaults(confDir); err != nil {
		return nil, exitcode.New(exitcode.Usage, err)
	}
	return a, nil
}

// newDriverWatch builds the poller of driver pod ns/pod with the
// submission's credentials, and names the submission in res.
func newDriverWatch(a *k8sArgs, creds *k8sCreds, ns, pod string, o *K8sOptions, res *K8sResult) (*driverWatch, error) {
	w := &driverWatch{
		creds: creds, ns: ns, pod: pod,
		container: a.conf["spark.kubernetes.driver.podTemplateContainerName"],
		o:         o, now: time.Now,
	}
	if g := a.conf["spark.kubernetes.appKillPodDeletionGracePeriod"]; g != "" {
		if n, err := strconv.ParseInt(strings.TrimSuffix(g, "s"), 10, 64); err == nil {
			w.deleteGrace = &n
		}
	}
	if err := w.reload(); err != nil {
		res.Reason = reasonUnauthorized
		return nil, exitcode.New(exitcode.NoPerm, err)
	}
	w.logs = apiLogs{client: func() kubernetes.Interface { return w.client }}
	res.Namespace, res.Pod, res.SubmissionID = w.ns, w.pod, w.ns+":"+w.pod
	return w, nil
}
