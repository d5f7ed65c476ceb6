package k8s

import (
	"context"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
)

// Option configures a Backend (New). Each With… setter documents its
// default; a zero duration takes the default too. A value that cannot
// apply, or options that conflict, make New fail with an
// errdefs.BadArgument naming the option (errdefs.OptionOf).
type Option func(*options) error

type options struct {
	sparkSubmit        string
	master             string
	timeout            time.Duration
	pollInterval       time.Duration
	pendingTimeout     time.Duration
	hungGrace          time.Duration
	notFoundGrace      time.Duration
	apiRetryTimeout    time.Duration
	apiCallTimeout     time.Duration // tests; 0: defaultAPICallTimeout
	killHungDriver     bool
	killOnCancel       bool
	logTail            int
	via                string
	sparkVersion       string
	submitter          string
	driverSparkVersion string
	imageSparkVersion  string
	lookupVersion      func(ctx context.Context, image string) (string, error)
	quiet, verbose     bool
	stderr             io.Writer
	environ            []string // "K=V": Status and Kill's, or the submission's (run)
	inClusterDir       string
	conf               map[string]string
	gracePeriod        *int64

	client       kubernetes.Interface // tests (Status, Kill)
	noWait       bool                 // SubmitBatch: end once the driver objects exist
	clients      *clientCache         // SubmitBatch: one client per credentials
	retryBackoff []time.Duration      // tests; nil: defaultRetryBackoff
}

// makeOptions applies opts, then the defaults to what they left unset, and
// checks the values and their conflicts.
func makeOptions(opts []Option) (*options, error) {
	o := &options{killOnCancel: true}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if err := checkSubmitter(o.submitter); err != nil {
		return nil, err
	}
	switch {
	case o.via != "" && o.via != ViaOperator:
		return nil, errdefs.Optionf(errdefs.BadArgument, "k8s.WithVia", "via %q: must be operator or empty", o.via)
	case o.via != "" && o.submitter != "" && o.submitter != SubmitterSparkSubmit:
		return nil, errdefs.Optionf(errdefs.BadArgument, "k8s.WithVia", "via %s creates a SparkApplication: submitter %s does not apply", o.via, o.submitter)
	case o.timeout < 0:
		return nil, errdefs.Optionf(errdefs.BadArgument, "k8s.WithTimeout", "time limit %s: negative", o.timeout)
	case o.logTail < 0:
		return nil, errdefs.Optionf(errdefs.BadArgument, "k8s.WithLogTail", "log tail %d: negative", o.logTail)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.pollInterval, 10*time.Second)
	def(&o.pendingTimeout, 10*time.Minute)
	def(&o.hungGrace, 2*time.Minute)
	def(&o.notFoundGrace, time.Minute)
	def(&o.apiRetryTimeout, 5*time.Minute)
	def(&o.apiCallTimeout, defaultAPICallTimeout)
	if o.stderr == nil {
		o.stderr = io.Discard
	}
	if o.sparkVersion == "" {
		o.sparkVersion = "3.5.3"
	}
	return o, nil
}

// ViaOperator is WithVia's one value: a kubeflow SparkApplication.
const ViaOperator = "operator"

// WithSparkSubmit sets the spark-submit binary Submit runs. Required by
// Submit with the spark-submit submitter (errdefs.BadArgument, whose
// errdefs.OptionOf is "k8s.WithSparkSubmit", without it); no default.
func WithSparkSubmit(path string) Option {
	return func(o *options) error { o.sparkSubmit = path; return nil }
}

// WithTimeout bounds the whole run of Submit or Attach (an
// errdefs.Timeout error whose errdefs.OptionOf is "k8s.WithTimeout"). The
// default (0) is none.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error { o.timeout = d; return nil }
}

// WithPollInterval sets the time between two Gets of the driver pod, ±10 %
// jitter. The default is 10s.
func WithPollInterval(d time.Duration) Option {
	return func(o *options) error { o.pollInterval = d; return nil }
}

// WithPendingTimeout fails a driver that stays Pending or waiting
// (ImagePullBackOff, Unschedulable, ...) this long (errdefs.Timeout,
// option "k8s.WithPendingTimeout"). The default is 10m; negative disables
// it.
func WithPendingTimeout(d time.Duration) Option {
	return func(o *options) error { o.pendingTimeout = d; return nil }
}

// WithHungGrace sets how long the driver container may keep running after
// SparkContext has stopped. The default is 2m.
func WithHungGrace(d time.Duration) Option {
	return func(o *options) error { o.hungGrace = d; return nil }
}

// WithNotFoundGrace sets how long a pod that was never seen may be missing
// after spark-submit returned (errdefs.NotFound after it). The default is
// 1m.
func WithNotFoundGrace(d time.Duration) Option {
	return func(o *options) error { o.notFoundGrace = d; return nil }
}

// WithAPIRetryTimeout sets how long 5xx and network errors are retried
// before giving up (errdefs.Unavailable). The default is 5m.
func WithAPIRetryTimeout(d time.Duration) Option {
	return func(o *options) error { o.apiRetryTimeout = d; return nil }
}

// WithKillHungDriver says whether a hung driver's pod is deleted. Without
// it (the default, false), the errdefs.Hung error of a hung driver has the
// errdefs.OptionOf "k8s.WithKillHungDriver" (it says why the pod is left
// running).
func WithKillHungDriver(kill bool) Option {
	return func(o *options) error { o.killHungDriver = kill; return nil }
}

// WithKillOnCancel says whether the driver pod is deleted when ctx is
// cancelled, the timeout is reached or the driver stays stuck past the
// pending timeout. The default is true, as for every backend (a cancelled
// submission is stopped).
func WithKillOnCancel(kill bool) Option {
	return func(o *options) error { o.killOnCancel = kill; return nil }
}

// WithLogTail sets how many driver log lines a failure shows. The default
// (0) is none.
func WithLogTail(lines int) Option {
	return func(o *options) error { o.logTail = lines; return nil }
}

// WithVia sets how Submit creates the driver: "" (the default: run the
// submitter) or "operator": create a kubeflow SparkApplication instead and
// poll its status.applicationState.
func WithVia(via string) Option {
	return func(o *options) error { o.via = via; return nil }
}

// WithOperatorSparkVersion sets spec.sparkVersion of the SparkApplication
// WithVia("operator") creates. The default is 3.5.3.
func WithOperatorSparkVersion(v string) Option {
	return func(o *options) error { o.sparkVersion = v; return nil }
}

// WithSubmitter sets who creates the driver of a cluster-mode submission:
// SubmitterSparkSubmit (the default, also for ""), SubmitterNative or
// SubmitterAuto (see chooseSubmitter).
func WithSubmitter(s string) Option {
	return func(o *options) error { o.submitter = s; return nil }
}

// WithDriverSparkVersion sets the driver image's Spark version, which the
// native submitter and DryRun need (3.5.x or 4.0.x). It wins over the
// baked image's (submit.Prepared.DriverSparkVersion, as its jars say; with
// a warning when they differ), which wins over the tag of an official
// Apache Spark image, which wins over what WithImageSparkVersionLookup
// reads from the driver image. No default.
func WithDriverSparkVersion(v string) Option {
	return func(o *options) error { o.driverSparkVersion = v; return nil }
}

// WithImageSparkVersionLookup sets how the native submitter and DryRun
// read the Spark version recorded on the driver image (prebake's
// dev.prebake.spark-version annotation) when neither WithDriverSparkVersion
// nor the baked image of this run, nor an official image's tag, gives it.
// Each call is bounded by a short time limit (imageLookupTimeout). The
// default is nil: the image is not asked.
func WithImageSparkVersionLookup(f func(ctx context.Context, image string) (string, error)) Option {
	return func(o *options) error { o.lookupVersion = f; return nil }
}

// WithQuiet drops the progress lines written to WithStderr's writer. The
// default is false.
func WithQuiet(quiet bool) Option {
	return func(o *options) error { o.quiet = quiet; return nil }
}

// WithVerbose adds detail to the progress written to WithStderr's writer.
// The default is false.
func WithVerbose(verbose bool) Option {
	return func(o *options) error { o.verbose = verbose; return nil }
}

// WithStderr sets where progress and warnings go. The default (nil)
// discards them.
func WithStderr(w io.Writer) Option {
	return func(o *options) error { o.stderr = w; return nil }
}

// WithEnviron sets the environment ("K=V", as os.Environ returns it)
// Status and Kill read (KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST). The
// default (nil) is an empty environment. Submit, Attach and DryRun read
// the submission's instead (Submission.Environ: also SPARK_USER, USER,
// PYSPARK_* for the native submitter), as they read its conf files and
// $MASTER/$DEPLOY_MODE, and spark-submit runs with it.
func WithEnviron(environ []string) Option {
	return func(o *options) error { o.environ = append([]string(nil), environ...); return nil }
}

// getenv returns the value of key in o's environment ("" when unset; the
// last entry wins, as in the environment exec gives a child).
func (o *options) getenv(key string) string {
	for i := len(o.environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(o.environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// WithMaster sets the master (k8s://…) Status and Kill ask, as
// spark-submit --status/--kill --master; Submit and Attach read the
// submission's.
func WithMaster(master string) Option {
	return func(o *options) error { o.master = master; return nil }
}

// WithInClusterDir sets the service-account directory used when there are
// no credentials of their own. The default ("") is DefaultInClusterDir.
func WithInClusterDir(dir string) Option {
	return func(o *options) error { o.inClusterDir = dir; return nil }
}

// WithConf sets the Spark conf Status and Kill take their credentials from
// (spark.kubernetes.authenticate.submission.*, spark.kubernetes.context),
// as spark-submit --status/--kill do; Submit and Attach read the
// submission's. The default (nil) is none.
func WithConf(conf map[string]string) Option {
	return func(o *options) error { o.conf = conf; return nil }
}

// WithGracePeriod sets the deletion grace period, in seconds, of the pods
// Kill deletes (spark.kubernetes.appKillPodDeletionGracePeriod; see
// ParseGracePeriod). The default is the pod's own.
func WithGracePeriod(seconds int64) Option {
	return func(o *options) error {
		if seconds < 0 {
			return errdefs.Optionf(errdefs.BadArgument, "k8s.WithGracePeriod", "grace period %ds: negative", seconds)
		}
		o.gracePeriod = &seconds
		return nil
	}
}
