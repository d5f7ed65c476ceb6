package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// A backend submits to and follows one kind of cluster manager, by master
// scheme: "k8s" (cmd/submit_k8s.go) and "rest" for spark:// and mesos://
// (cmd/submit_rest.go). Backends hold their flag values, so each command
// tree gets its own (newBackends).
type backend interface {
	// AddFlags adds the backend's own flags (shared ones are in submitFlags).
	AddFlags(fs *pflag.FlagSet)
	// Submit runs the rewritten submission and follows the driver to its end.
	// The returned error carries the exit code (exitcode.Driver for the
	// driver's own result).
	Submit(ctx context.Context, req *submitRequest) error
	// Status prints the state of id (spark-submit --status).
	Status(ctx context.Context, req *idRequest) error
	// Kill stops id (spark-submit --kill).
	Kill(ctx context.Context, req *idRequest) error
	// Attach follows req.Flags.pollOnly, submitted elsewhere, to its end
	// (submit --status-poll-only). It never submits.
	Attach(ctx context.Context, req *submitRequest) error
}

// backends are a command tree's backends by master kind.
type backends map[string]backend

// newBackends returns fresh backends for one command tree.
func newBackends() backends {
	return backends{"k8s": &k8sBackend{}, "rest": &restBackend{}, "local": localBackend{}}
}

// forMaster checks -o (text or json) and returns it with the backend of a
// master URL.
func (bs backends) forMaster(g *globals, cmd, master string, outputs ...outputFormat) (outputFormat, backend, error) {
	out, err := checkOutput(g, append([]outputFormat{outText, outJSON}, outputs...)...)
	if err != nil {
		return "", nil, err
	}
	kind, err := masterKind(cmd, master)
	if err != nil {
		return "", nil, err
	}
	b, ok := bs[kind]
	if !ok {
		return "", nil, exitcode.Errorf(exitcode.Internal, "no %s backend built in", kind)
	}
	return out, b, nil
}

// submitFlags are shared by every backend.
type submitFlags struct {
	resolve  resolveFlags
	s3       s3StoreFlags
	registry registryFlags
	storeURLFlags
	imageTarget  string
	sparkSubmit  string
	timeout      time.Duration
	pollInterval time.Duration
	killOnCancel bool
	pollOnly     string
	batch        string // --batch FILE (cmd/submit_batch.go)
	parallel     int
	memo         *pipeline.Memo // a batch's: one resolve and bake per set of packages and images
	strict       bool
	sparkHome    string // the base image's
	// localSparkJars is the jars directory of the Spark that runs a driver
	// here (set for the local backend): the resolved jars are checked
	// against it.
	localSparkJars string
	// exec: the arguments are a Python program run with the rewritten
	// $PYSPARK_SUBMIT_ARGS (cmd/submit_exec.go).
	exec           bool
	rewriteOptions []rewrite.Option
}

// submitRequest is what a backend gets: the submission after resolve, bake
// and rewrite, ready for spark-submit (K8s) or the REST protocol.
type submitRequest struct {
	// Sub is the rewritten spark-submit command line (without the
	// spark-submit binary), loaded once; before prepare (and for
	// --status-poll-only) the command line as given.
	Sub *submit.Submission
	// ImageSparkVersion is the Spark version of the driver's baked image,
	// as its base's jars say; "" when nothing was baked.
	ImageSparkVersion string
	Master            string
	Flags             *submitFlags
	Output            outputFormat // text|json|yaml
	Quiet             bool
	Verbose           bool
	Stdout            io.Writer
	Stderr            io.Writer
}

// idRequest is a status or kill request.
type idRequest struct {
	ID     string
	Master string
	Output outputFormat
	Stdout io.Writer
	Stderr io.Writer
	Flags  *pflag.FlagSet
}

// prepared is what prepare hands the backend: the rewritten submission to
// run and the Spark version of the driver's baked image ("" if none).
type prepared struct {
	Sub               *submit.Submission
	ImageSparkVersion string
}

// prepareFunc resolves, caches and rewrites sub: prepare (cmd/prepare.go),
// or a pass-through in tests (withPrepare).
type prepareFunc func(ctx context.Context, g *globals, f *submitFlags, fs *pflag.FlagSet, sub *submit.Submission, stderr io.Writer) (*prepared, error)

// masterKind returns the backend name for a master URL; cmd names the
// command for the message. submit's master is Spark's effective one
// (local[*] when none is given, as spark-submit's default).
func masterKind(cmd, master string) (string, error) {
	switch kind := submit.ClusterKind(master); {
	case kind == submit.ClusterLocal, kind == submit.ClusterYARN, kind == submit.ClusterConnect:
		return "local", nil
	case kind == submit.ClusterK8s:
		return "k8s", nil
	case kind == submit.ClusterStandalone, kind == submit.ClusterMesos:
		return "rest", nil
	case master == "":
		return "", exitcode.Errorf(exitcode.Usage, "prebake %s needs --master URL (k8s://…, spark://… or mesos://…), the master the submission was made to", cmd)
	}
	return "", exitcode.Errorf(exitcode.Usage, "--master %q: not a master Spark takes; prebake takes every one spark-submit does: %s", master, knownMasters)
}

// knownMasters lists the masters submit takes, for messages.
const knownMasters = "local, local[N], local[*], local[N,F], local-cluster[N,C,M], yarn (client or cluster mode), " +
	"spark://host:port and mesos://host:port (client mode, or cluster mode followed over REST), k8s://https://host:port, or --remote sc://… (Spark Connect)"

// localSparkJars is the jars directory of the Spark that spark-submit
// runs: $SPARK_HOME/jars, else the one next to the spark-submit binary
// (bin/..), as Spark's own script finds its home; "" when unknown.
func localSparkJars(flag string, getenv func(string) string, lookPath func(string) (string, error)) string {
	if h := getenv("SPARK_HOME"); h != "" {
		return filepath.Join(h, "jars")
	}
	bin := sparkSubmitBin(flag, getenv, lookPath)
	if bin == "" {
		return ""
	}
	p, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Dir(p)), "jars")
}

// ignoreTargetsHere drops --image-target and --store when the driver runs
// here (local masters, YARN, client mode): its jars are the local cache's
// paths, so a worker-wide $PREBAKE_IMAGE_TARGET or $PREBAKE_STORE, meant
// for its cluster jobs, neither breaks nor slows a local one. A value from
// the environment or prebake.yaml is dropped with a -v line, one from the
// command line with a warning.
func ignoreTargetsHere(g *globals, f *submitFlags, fl *pflag.FlagSet, master string, stderr io.Writer) {
	rep := g.reporter(stderr)
	defer rep.Wait()
	for _, t := range []struct {
		flag string
		val  *string
	}{{"image-target", &f.imageTarget}, {"store", &f.s3.store}} {
		if *t.val == "" {
			continue
		}
		what := fmt.Sprintf("--%s %s", t.flag, redact.URL(*t.val))
		if from := settingFrom(fl, t.flag); from != "" {
			if strings.HasPrefix(from, "PREBAKE_") {
				from = "$" + from
			}
			what = fmt.Sprintf("%s (%s)", redact.URL(*t.val), from)
			rep.Debugf("%s ignored: master %s runs the driver here, which reads the jars from the local cache", what, redact.URL(master))
		} else {
			rep.Warnf("%s ignored: master %s runs the driver here, which reads the jars from the local cache", what, redact.URL(master))
		}
		*t.val = ""
	}
}

// newSubmitCmd is `prebake submit`: prepare, then the master's backend.
func newSubmitCmd(g *globals, bs backends, prepare prepareFunc) *cobra.Command {
	f := &submitFlags{}
	c := &cobra.Command{
		Use:   "submit [flags] -- <spark-submit args>",
		Short: "Resolve, cache and rewrite --packages, submit, and follow the driver to its end",
		Example: `  prebake submit --store s3://bucket/prebake -- \
    --master k8s://https://k8s.example:6443 --deploy-mode cluster \
    --packages org.apache.hadoop:hadoop-aws:3.3.4 --class com.example.Main app.jar`,
		RunE: func(c *cobra.Command, args []string) error {
			if f.exec {
				return runExec(c, g, prepare, f, args)
			}
			if f.batch != "" {
				return runBatch(c, g, bs, prepare, f, args)
			}
			// The command line is loaded once (argv, --properties-file,
			// spark-defaults.conf, $MASTER, $DEPLOY_MODE); every later
			// step reads this value.
			sub, err := submit.LoadSubmission(args, os.Getenv)
			if err != nil {
				return err
			}
			// The conf's secrets are masked by value wherever spark-submit,
			// the driver or a server prints them (audit 3 N11).
			redact.AddConfSecrets(sub.SparkConf())
			master := sub.Master()
			// yaml: the objects of k8s --dry-run.
			out, b, err := bs.forMaster(g, c.Name(), master, outYAML)
			if err != nil {
				return err
			}
			req := &submitRequest{
				Sub: sub, Master: master, Flags: f, Output: out,
				Quiet: g.quiet, Verbose: g.verbose,
				Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(),
			}
			if f.pollOnly != "" {
				// Attaching resolves, bakes and submits nothing. The driver
				// is stopped on SIGINT/SIGTERM only when --kill-on-cancel is
				// given: a sensor that gives up must not stop a job it did
				// not start.
				f.killOnCancel = f.killOnCancel && c.Flags().Changed("kill-on-cancel")
				return b.Attach(c.Context(), req)
			}
			b = bs.runsHere(b, sub)
			if _, here := b.(localBackend); here {
				ignoreTargetsHere(g, f, c.Flags(), master, c.ErrOrStderr())
				f.localSparkJars = localSparkJars(f.sparkSubmit, os.Getenv, exec.LookPath)
			}
			rewritten, err := prepare(c.Context(), g, f, c.Flags(), sub, c.ErrOrStderr())
			if err != nil {
				return err
			}
			req.Sub, req.ImageSparkVersion = rewritten.Sub, rewritten.ImageSparkVersion
			return b.Submit(c.Context(), req)
		},
	}
	addSubmitFlags(c.Flags(), f, bs)
	return c
}

// newIDCmd is `prebake status` or `prebake kill` (op).
func newIDCmd(g *globals, bs backends, op string) *cobra.Command {
	var master string
	c := &cobra.Command{
		Use:   op + " ID --master URL",
		Short: map[string]string{"status": "Print a driver's state, as spark-submit --status", "kill": "Kill a driver, as spark-submit --kill"}[op],
		Example: fmt.Sprintf(`  prebake %[1]s spark-ns:my-app-driver --master k8s://https://k8s.example:6443
  prebake %[1]s 'spark-ns:nightly-*' --master k8s://https://k8s.example:6443
  prebake %[1]s driver-20261129101010-0001 --master spark://m1:7077,m2:7077`, op),
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			out, b, err := bs.forMaster(g, c.Name(), master)
			if err != nil {
				return err
			}
			req := &idRequest{ID: args[0], Master: master, Output: out, Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(), Flags: c.Flags()}
			if op == "status" {
				return b.Status(c.Context(), req)
			}
			return b.Kill(c.Context(), req)
		},
	}
	c.Flags().StringVar(&master, "master", "", "master URL: k8s://…, spark://… or mesos://…")
	c.Flags().StringArrayP("conf", "c", nil, "Spark conf k=v for the credentials, as spark-submit --status/--kill take them (spark.kubernetes.authenticate.submission.*, spark.kubernetes.context, spark.kubernetes.appKillPodDeletionGracePeriod)")
	c.Flags().Int("rest-port", 0, "spark:// masters: the REST port (default 6066 when the URL says 7077 or no port)")
	return c
}

// addSubmitFlags defines submit's flags on fs.
func addSubmitFlags(fs *pflag.FlagSet, f *submitFlags, bs backends) {
	f.resolve.add(fs)
	f.s3.add(fs)
	f.registry.add(fs)
	f.registry.addJobs(fs)
	f.s3.addConcurrency(fs)
	f.storeURLFlags.add(fs)
	fs.StringVar(&f.imageTarget, "image-target", "", "bake the jars into the argv's Spark image and push it to this repository (default $PREBAKE_IMAGE_TARGET)")
	fs.StringVar(&f.sparkSubmit, "spark-submit", "", "spark-submit binary (default $SPARK_HOME/bin/spark-submit, else spark-submit on $PATH)")
	durationVar(fs, &f.timeout, "timeout", 0, "bound the whole run (0: none); exit 75 when reached")
	durationVar(fs, &f.pollInterval, "poll-interval", 10*time.Second, "how often to poll the driver (with jitter)")
	fs.BoolVar(&f.killOnCancel, "kill-on-cancel", true, "on SIGINT/SIGTERM, kill the driver")
	fs.BoolVar(&f.strict, "strict", false, strictHelp)
	fs.StringVar(&f.sparkHome, "spark-home", "", "with --image-target: where the base image keeps Spark (default /opt/spark); the local Spark is $SPARK_HOME")
	fs.StringVar(&f.batch, "batch", "", "k8s cluster mode: submit every application of FILE (one JSON array of spark-submit arguments per line; - for stdin) natively from this one process, without waiting for them; exit code: the highest of the results'")
	fs.IntVar(&f.parallel, "parallel", 16, "with --batch: submissions in flight at once")
	fs.BoolVar(&f.exec, "exec", false, "the arguments after -- are a Python program that starts its own JVM (python3 app.py, jupyter lab): rewrite $PYSPARK_SUBMIT_ARGS and run it with the new value; its exit code is prebake's")
	fs.StringVar(&f.pollOnly, "status-poll-only", "", "follow submission ID, made elsewhere, to its end; never submits (k8s://: namespace:driver-pod; spark://, mesos://: the submission ID)")
	for _, name := range []string{"k8s", "rest"} {
		if b, ok := bs[name]; ok {
			b.AddFlags(fs)
		}
	}
}

// newSubmitFlagSet returns a flag set with submit's flags bound to f (and
// to fresh backends).
func newSubmitFlagSet(f *submitFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("submit", pflag.ContinueOnError)
	addSubmitFlags(fs, f, newBackends())
	return fs
}
