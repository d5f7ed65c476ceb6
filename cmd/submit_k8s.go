package cmd

import (
	"context"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/submit/k8s"
)

// k8sBackend submits to k8s:// masters with spark-submit and polls the
// driver pod (k8s.Submit).
type k8sBackend struct {
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

func (b *k8sBackend) AddFlags(fs *pflag.FlagSet) {
	durationVar(fs, &b.pendingTimeout, "pending-timeout", 10*time.Minute, "k8s: fail (exit 75) when the driver stays Pending/waiting this long (ImagePullBackOff, Unschedulable, ...); negative: never")
	durationVar(fs, &b.hungGrace, "hung-grace", 2*time.Minute, "k8s: a driver still running this long after SparkContext stopped is hung")
	fs.BoolVar(&b.killHungDriver, "kill-hung-driver", true, "k8s: delete a hung driver's pod")
	fs.IntVar(&b.logTail, "log-tail", 50, "k8s: driver log lines to show when the driver fails")
	durationVar(fs, &b.notFoundGrace, "not-found-grace", time.Minute, "k8s: how long the driver pod may be missing after spark-submit returned (then exit 66)")
	fs.StringVar(&b.via, "via", "", "k8s: \"operator\" creates a kubeflow SparkApplication instead of running spark-submit, and polls its state")
	durationVar(fs, &b.apiRetryTimeout, "api-retry-timeout", 5*time.Minute, "k8s: give up (exit 69) when the API server fails this long")
	fs.StringVar(&b.submitter, "submitter", k8s.SubmitterSparkSubmit, "k8s cluster mode: spark-submit (run it), native (create the driver pod, ConfigMap and Service in Go, no JVM; refuses what it cannot reproduce) or auto (native when the argv is inside its supported set, else spark-submit)")
	fs.StringVar(&b.sparkVersion, "spark-version", "", "k8s: the driver image's Spark version (3.5.x or 4.0.x) for --submitter native|auto and --dry-run; default: what the baked image's jars say (--image-target), else an apache/spark image's tag")
	fs.BoolVar(&b.dryRun, "dry-run", false, "k8s: print the objects the native submitter would create (-o yaml), create nothing")
}

func (b *k8sBackend) Submit(ctx context.Context, req *submitRequest) error {
	if b.dryRun {
		return k8s.DryRun(req.Sub, req.Stdout, k8s.WithDriverSparkVersion(b.sparkVersion), k8s.WithImageSparkVersion(req.ImageSparkVersion), k8s.WithGetenv(os.Getenv), k8s.WithStderr(req.Stderr))
	}
	if req.Output == outYAML {
		return exitcode.Errorf(exitcode.Usage, "-o yaml: only with --dry-run")
	}
	o := append(b.options(req), k8s.WithSubmitter(b.submitter), k8s.WithDriverSparkVersion(b.sparkVersion), k8s.WithImageSparkVersion(req.ImageSparkVersion))
	out, err := k8s.Backend{Options: o}.Submit(ctx, req.Sub)
	return render(req.Output, out, err, req.Stdout, req.Stderr)
}

// Attach follows the driver pod named by --status-poll-only; spark-submit is
// never run.
func (b *k8sBackend) Attach(ctx context.Context, req *submitRequest) error {
	res, err := k8s.Attach(ctx, req.Flags.pollOnly, req.Sub, b.options(req)...)
	return render(req.Output, res, err, req.Stdout, req.Stderr)
}

func (b *k8sBackend) options(req *submitRequest) []k8s.Option {
	return []k8s.Option{
		k8s.WithSparkSubmit(sparkSubmitBin(req.Flags.sparkSubmit, os.Getenv, exec.LookPath)),
		k8s.WithTimeout(req.Flags.timeout),
		k8s.WithPollInterval(req.Flags.pollInterval),
		k8s.WithPendingTimeout(b.pendingTimeout),
		k8s.WithHungGrace(b.hungGrace),
		k8s.WithNotFoundGrace(b.notFoundGrace),
		k8s.WithAPIRetryTimeout(b.apiRetryTimeout),
		k8s.WithKillHungDriver(b.killHungDriver),
		k8s.WithKillOnCancel(req.Flags.killOnCancel),
		k8s.WithLogTail(b.logTail),
		k8s.WithVia(b.via),
		k8s.WithQuiet(req.Quiet),
		k8s.WithVerbose(req.Verbose),
		k8s.WithStderr(req.Stderr),
		k8s.WithGetenv(os.Getenv),
	}
}

func (b *k8sBackend) Status(ctx context.Context, req *idRequest) error {
	o, err := b.idOptions(req)
	if err != nil {
		return err
	}
	ss, err := k8s.Status(ctx, req.Master, req.ID, o...)
	if ss == nil { // no answer to render
		return err
	}
	if req.Output == outJSON {
		if werr := printJSON(req.Stdout, ss); werr != nil {
			return exitcode.New(exitcode.Internal, werr)
		}
		return err
	}
	writeK8sStatusText(req.Stdout, ss)
	return err
}

func (b *k8sBackend) Kill(ctx context.Context, req *idRequest) error {
	o, err := b.idOptions(req)
	if err != nil {
		return err
	}
	tried, err := k8s.Kill(ctx, req.Master, req.ID, o...)
	if tried == nil { // no answer to render
		return err
	}
	if req.Output == outJSON {
		if werr := printJSON(req.Stdout, k8s.Deleted(tried)); werr != nil {
			return exitcode.New(exitcode.Internal, werr)
		}
		return err
	}
	k8s.WriteKillText(req.Stdout, tried)
	return err
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

// idOptions carries --conf k=v (the submission's credentials, as
// spark-submit --status/--kill take them) into the K8s options.
func (b *k8sBackend) idOptions(req *idRequest) ([]k8s.Option, error) {
	o := []k8s.Option{k8s.WithStderr(req.Stderr), k8s.WithGetenv(os.Getenv)}
	if req.Flags == nil {
		return o, nil
	}
	confs, err := req.Flags.GetStringArray("conf")
	if err != nil {
		return o, nil
	}
	var conf map[string]string
	for _, kv := range confs {
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
