package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s"
	"github.com/prebake/prebake/submit/k8s/native"
)

// k8sAdapter is the K8s backend's adapter (k8s.New): k8s:// masters,
// spark-submit, native or operator, the driver pod polled to its end.
type k8sAdapter struct {
	pendingTimeout  time.Duration
	hungGrace       time.Duration
	notFoundGrace   time.Duration
	apiRetryTimeout time.Duration
	killHungDriver  bool
	logTail         int
	via             string
	submitter       string
	sparkVersion    string
	dryRun          bool
}

// k8sOutcome is a K8s run as the CLI prints it.
type k8sOutcome = jsondoc.Outcome[*k8s.Result]

// Describe declares the K8s backend: k8s:// masters in every deploy mode.
func (*k8sAdapter) Describe() backendInfo {
	return backendInfo{
		Kind:       submit.KindK8s,
		SubmitDocs: []jsondoc.Doc{{Name: "submit-k8s", Command: "prebake submit -o json, K8s", Type: jsondoc.TypeOf[k8sOutcome]()}},
		StatusDocs: []jsondoc.Doc{{Name: "status-k8s", Command: "prebake status -o json, k8s://", Type: jsondoc.TypeOf[[]k8s.DriverStatus](),
			Note: "one entry per matching driver pod; kill -o json prints the pods it deleted"}},
		OptionHints: map[string]string{
			"k8s.Attach.id":       "flag --status-poll-only",
			"k8s.WithSubmitter":   "flag --submitter",
			"k8s.WithSparkSubmit": "pass --spark-submit PATH",
			"k8s.WithVia":         "flag --via",
			// The options whose value explains an outcome: a limit
			// reached, a driver left running.
			"k8s.WithTimeout":        "the limit is --timeout",
			"k8s.WithPendingTimeout": "the limit is --pending-timeout",
			"k8s.WithKillHungDriver": "as --kill-hung-driver=false asks",
		},
		ErrorHints: []func(err error) (string, bool){
			func(err error) (string, bool) {
				var e *native.UnsupportedError
				return "flag --spark-version", errors.As(err, &e) && e.Option == native.OptionSparkVersion
			},
			func(err error) (string, bool) {
				return "use --submitter spark-submit", errors.Is(err, native.ErrUnsupported)
			},
		},
		IDMasters: []string{"k8s://…"},
		IDExamples: []string{
			"spark-ns:my-app-driver --master k8s://https://k8s.example:6443",
			"'spark-ns:nightly-*' --master k8s://https://k8s.example:6443",
		},
	}
}

func (b *k8sAdapter) AddFlags(fs *pflag.FlagSet) {
	durationVar(fs, &b.pendingTimeout, "pending-timeout", 10*time.Minute, "k8s: fail (exit 75) when the driver stays Pending/waiting this long (ImagePullBackOff, Unschedulable, ...); negative: never")
	durationVar(fs, &b.hungGrace, "hung-grace", 2*time.Minute, "k8s: a driver still running this long after SparkContext stopped is hung")
	fs.BoolVar(&b.killHungDriver, "kill-hung-driver", true, "k8s: delete a hung driver's pod")
	fs.IntVar(&b.logTail, "log-tail", 50, "k8s: driver log lines to show when the driver fails")
	durationVar(fs, &b.notFoundGrace, "not-found-grace", time.Minute, "k8s: how long the driver pod may be missing after spark-submit returned (then exit 66)")
	fs.StringVar(&b.via, "via", "", "k8s: \"operator\" creates a kubeflow SparkApplication instead of running spark-submit, and polls its state")
	durationVar(fs, &b.apiRetryTimeout, "api-retry-timeout", 5*time.Minute, "k8s: give up (exit 69) when the API server fails this long")
	fs.StringVar(&b.submitter, "submitter", k8s.SubmitterSparkSubmit, "k8s cluster mode: spark-submit (run it), native (create the driver pod, ConfigMap and Service in Go, no JVM; refuses what it cannot reproduce) or auto (native when the argv is inside its supported set, else spark-submit)")
	fs.StringVar(&b.sparkVersion, "spark-version", "", "k8s: the driver image's Spark version (3.5.x or 4.0.x) for --submitter native|auto and --dry-run; default: what the baked image's jars say (--image-target), else an apache/spark image's tag, else the dev.prebake.spark-version annotation of the driver image (asked with --registry-auth or the docker keychain)")
	fs.BoolVar(&b.dryRun, "dry-run", false, "k8s: print the objects the native submitter would create (-o yaml), create nothing")
}

// AddIDFlags adds nothing: status and kill's --conf carries the
// credentials.
func (*k8sAdapter) AddIDFlags(*pflag.FlagSet) {}

// New maps the flags onto k8s.New: submit's (a dry run is dryRunK8s),
// an attach's, or status and kill's (idOptions).
func (b *k8sAdapter) New(r *run) (submit.Backend, error) {
	if r.id != nil {
		o, err := idOptions(r)
		if err != nil {
			return nil, err
		}
		return k8s.New(o...)
	}
	o := b.options(r)
	if !r.attach {
		if r.out == outYAML && !b.dryRun {
			return nil, exitcode.Errorf(exitcode.Usage, "-o yaml: only with --dry-run")
		}
		o = append(o, k8s.WithSubmitter(b.submitter), k8s.WithDriverSparkVersion(b.sparkVersion))
	}
	be, err := k8s.New(o...)
	if err != nil || r.attach || !b.dryRun {
		return be, err
	}
	return dryRunK8s{be, r.stdout}, nil
}

// dryRunK8s is submit --dry-run: Submit prints the objects the native
// submitter would create (-o yaml) and creates nothing.
type dryRunK8s struct {
	*k8s.Backend
	stdout io.Writer
}

// Submit prints the objects; its outcome is nil (nothing to render). A
// signal while they are built prints nothing (80).
func (d dryRunK8s) Submit(ctx context.Context, p *submit.Prepared) (submit.Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	objs, err := d.DryRun(ctx, p)
	if err != nil {
		return nil, err
	}
	y, err := objs.YAML()
	if err != nil {
		return nil, exitcode.New(exitcode.Internal, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, err = d.stdout.Write(y)
	return nil, err
}

func (b *k8sAdapter) options(r *run) []k8s.Option {
	return []k8s.Option{
		k8s.WithSparkSubmit(sparkSubmitBin(r.f.sparkSubmit, os.Getenv, exec.LookPath)),
		k8s.WithTimeout(r.f.timeout),
		k8s.WithPollInterval(r.f.pollInterval),
		k8s.WithPendingTimeout(b.pendingTimeout),
		k8s.WithHungGrace(b.hungGrace),
		k8s.WithNotFoundGrace(b.notFoundGrace),
		k8s.WithAPIRetryTimeout(b.apiRetryTimeout),
		k8s.WithKillHungDriver(b.killHungDriver),
		k8s.WithKillOnCancel(r.f.killOnCancel),
		k8s.WithLogTail(b.logTail),
		k8s.WithVia(b.via),
		k8s.WithQuiet(r.quiet),
		k8s.WithVerbose(r.verbose),
		k8s.WithStderr(r.stderr),
		k8s.WithImageSparkVersionLookup(imageSparkVersion(&r.f.registry)),
	}
}

// imageSparkVersion reads the Spark version prebake recorded on an image
// (dev.prebake.spark-version) with the registry flags' credentials (else the
// usual keychain): the native submitter's version when no flag gives it.
func imageSparkVersion(rf *registryFlags) func(ctx context.Context, image string) (string, error) {
	return func(ctx context.Context, image string) (string, error) {
		opts, err := rf.options(nil)
		if err != nil {
			return "", err
		}
		info, err := layers.Inspect(ctx, image, opts...)
		if err != nil {
			return "", err
		}
		return info.SparkVersion, nil
	}
}

// RenderStates prints status (the pods, as spark-submit --status) or kill
// (the deleted pods; "Deleting driver pod: …" lines).
func (b *k8sAdapter) RenderStates(r *run, op string, states []submit.DriverState, err error) error {
	if states == nil { // no answer to render
		return err
	}
	ss := []k8s.DriverStatus{}
	for _, s := range states {
		if d, ok := s.(k8s.DriverStatus); ok {
			ss = append(ss, d)
		}
	}
	if r.out == outJSON {
		v := ss
		if op == "kill" {
			v = deleted(ss)
		}
		if werr := printJSON(r.stdout, v); werr != nil {
			return exitcode.New(exitcode.Internal, werr)
		}
		return err
	}
	if op == "kill" {
		writeK8sKillText(r.stdout, ss)
		return err
	}
	writeK8sStatusText(r.stdout, ss)
	return err
}

// deleted are the pods of Kill's answer that were deleted (`kill -o json`:
// an array, empty when none).
func deleted(tried []k8s.DriverStatus) []k8s.DriverStatus {
	out := []k8s.DriverStatus{}
	for _, s := range tried {
		if s.Deleting {
			out = append(out, s)
		}
	}
	return out
}

// sparkSubmitBin picks spark-submit: --spark-submit, else
// $SPARK_HOME/bin/spark-submit, else spark-submit on $PATH (pip's pyspark,
// Homebrew, distro packages), as a shell would run it. "" when none.
func sparkSubmitBin(flag string, getenv func(string) string, lookPath func(string) (string, error)) string {
	switch {
	case flag != "":
		return flag
	case getenv("SPARK_HOME") != "":
		return filepath.Join(getenv("SPARK_HOME"), "bin", "spark-submit")
	}
	if p, err := lookPath("spark-submit"); err == nil {
		return p
	}
	return ""
}

// idOptions carries --master and --conf k=v (the submission's
// credentials, as spark-submit --status/--kill take them) into the K8s
// options.
func idOptions(r *run) ([]k8s.Option, error) {
	o := []k8s.Option{k8s.WithMaster(r.master), k8s.WithStderr(r.stderr), k8s.WithEnviron(os.Environ())}
	var conf map[string]string
	for _, kv := range r.id.conf {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exitcode.Errorf(exitcode.Usage, "--conf %q: want key=value", redact.ConfArg(kv))
		}
		if conf == nil {
			conf = map[string]string{}
		}
		conf[k] = v
		if k == "spark.kubernetes.appKillPodDeletionGracePeriod" {
			n, err := k8s.ParseGracePeriod(v)
			if err != nil {
				return nil, exitcode.Errorf(exitcode.Usage, "--conf %s=%q: want seconds", k, v)
			}
			o = append(o, k8s.WithGracePeriod(n))
		}
	}
	redact.AddConfSecrets(conf) // masked by value in any output (audit 3 N11)
	return append(o, k8s.WithConf(conf)), nil
}
