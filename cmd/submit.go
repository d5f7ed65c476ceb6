package cmd

import (
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
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// An adapter is cmd's side of one backend (submit.Kind): its flags, the
// options they map to (New: the constructed submit.Backend) and the
// renderer of its outcomes. Adapters hold their flag values, so each
// command tree gets its own (newAdapters). Adding a backend is one package
// under submit and one adapter here, which declares the rest (Describe).
type adapter interface {
	// Describe declares the backend to the CLI's lists: its kind, its JSON
	// documents, its option hints, and what status and kill take. It
	// reads no flag value (the lists are built from fresh adapters).
	Describe() backendInfo
	// AddFlags adds the backend's own flags (shared ones are in
	// submitFlags).
	AddFlags(fs *pflag.FlagSet)
	// AddIDFlags adds the backend's own flags to status and kill (shared
	// ones are in idFlags).
	AddIDFlags(fs *pflag.FlagSet)
	// New constructs the backend for one run.
	New(r *run) (submit.Backend, error)
	// Render prints the outcome of Submit or Attach with -o r.out and
	// returns the run's error (err), unless the output could not be
	// written.
	Render(r *run, o submit.Outcome, err error) error
	// RenderStates prints what Status or Kill (op) returned, as
	// spark-submit --status/--kill do, and returns err.
	RenderStates(r *run, op string, ss []submit.DriverState, err error) error
}

// run is what an adapter builds its backend from and renders to: the
// shared flags and the command's streams.
type run struct {
	f      *submitFlags // submit's flags (nil for status and kill)
	id     *idFlags     // status and kill's (nil for submit)
	master string
	// attach: submit --status-poll-only (the backend follows, never
	// submits).
	attach         bool
	out            outputFormat
	quiet, verbose bool
	stdout, stderr io.Writer
}

// idFlags are status and kill's (the backends' own are their adapters').
type idFlags struct {
	master string
	conf   []string
}

// A backendInfo is what an adapter declares of its backend (Describe).
// The CLI's lists are built from the adapters of newAdapters, in its
// order: the kinds (adapters.of), submit's flags (addSubmitFlags), the
// JSON documents (JSONDocs), the option hints (optionHints, errorHints)
// and status and kill's masters and examples (newIDCmd).
type backendInfo struct {
	Kind submit.Kind
	// SubmitDocs are the documents of its outcomes (submit -o json),
	// StatusDocs those of its driver states (status, kill -o json).
	SubmitDocs, StatusDocs []jsondoc.Doc
	// OptionHints name, for each of its library options that a flag
	// sets, the flag (the key is errdefs.OptionOf's: "k8s.WithVia").
	OptionHints map[string]string
	// ErrorHints are hints for its typed errors that no single option
	// explains: each returns its hint and whether err is its.
	ErrorHints []func(err error) (string, bool)
	// IDMasters are the master URLs status and kill take ("k8s://…"),
	// IDExamples their examples: the arguments after "prebake status"
	// ("ID --master URL"). None: the backend refuses status and kill.
	IDMasters, IDExamples []string
}

// adapters are a command tree's backends, in the order their flags are
// added and their documents listed.
type adapters []adapter

// newAdapters returns fresh adapters for one command tree: the one list
// of the backends built in.
func newAdapters() adapters {
	return adapters{&k8sAdapter{}, localAdapter{}, &restAdapter{}}
}

// of returns the adapter of kind, nil when none is built in.
func (as adapters) of(kind submit.Kind) adapter {
	for _, a := range as {
		if a.Describe().Kind == kind {
			return a
		}
	}
	return nil
}

// idMasters are the master URLs status and kill take, for their help and
// messages: "k8s://…, spark://… or mesos://…".
func (as adapters) idMasters() string {
	var ms []string
	for _, a := range as {
		ms = append(ms, a.Describe().IDMasters...)
	}
	if len(ms) < 2 {
		return strings.Join(ms, "")
	}
	return strings.Join(ms[:len(ms)-1], ", ") + " or " + ms[len(ms)-1]
}

// forKind checks -o (text or json, and outputs) and returns it with the
// adapter of kind.
func (as adapters) forKind(g *globals, kind submit.Kind, outputs ...outputFormat) (outputFormat, adapter, error) {
	out, err := checkOutput(g, append([]outputFormat{outText, outJSON}, outputs...)...)
	if err != nil {
		return "", nil, err
	}
	a := as.of(kind)
	if a == nil {
		return "", nil, exitcode.Errorf(exitcode.Internal, "no %s backend built in", kind)
	}
	return out, a, nil
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
	strict       strictness
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

// kindOf is the backend kind of a master URL (submit.KindOf); cmd names
// the command for the message. A status, kill or attach asks the cluster
// manager whatever the deploy mode.
func (as adapters) kindOf(cmd, master string) (submit.Kind, error) {
	kind, err := submit.KindOf(master)
	switch {
	case err == nil:
		return kind, nil
	case master == "":
		return "", exitcode.Errorf(exitcode.Usage, "prebake %s needs --master URL (%s), the master the submission was made to", cmd, as.idMasters())
	}
	return "", exitcode.Errorf(exitcode.Usage, "--master %q: not a master Spark takes; prebake takes every one spark-submit does: %s", master, knownMasters)
}

// route is the backend kind that runs sub (submit.Route), with kindOf's
// messages.
func (as adapters) route(cmd string, sub *submit.Submission) (submit.Kind, error) {
	kind, err := submit.Route(sub)
	if err != nil {
		return as.kindOf(cmd, sub.Master())
	}
	return kind, nil
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
	ignoreHere(g, fl, master, stderr, hereTarget{"image-target", &f.imageTarget}, hereTarget{"store", &f.s3.store})
}

// A hereTarget is a flag (and its value) that a driver running here does
// not use (ignoreHere).
type hereTarget struct {
	flag string
	val  *string
}

// ignoreHere empties each target's value for master, whose driver runs
// here: one from the environment or prebake.yaml with a -v line, one from
// the command line with a warning (ignoreTargetsHere; rewrite's --store).
func ignoreHere(g *globals, fl *pflag.FlagSet, master string, stderr io.Writer, targets ...hereTarget) {
	rep := g.reporter(stderr)
	defer rep.Wait()
	for _, t := range targets {
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

// newSubmitCmd is `prebake submit`: route, then pipeline.Submit (prepare,
// then the backend), then the backend's renderer.
func newSubmitCmd(g *globals, as adapters, pp prepareFunc) *cobra.Command {
	f := &submitFlags{}
	c := &cobra.Command{
		Use:   "submit [flags] -- <spark-submit args>",
		Short: "Resolve, cache and rewrite --packages, submit, and follow the driver to its end",
		Example: `  prebake submit --store s3://bucket/prebake -- \
    --master k8s://https://k8s.example:6443 --deploy-mode cluster \
    --packages org.apache.hadoop:hadoop-aws:3.3.4 --class com.example.Main app.jar`,
		RunE: func(c *cobra.Command, args []string) error {
			if f.exec {
				return runExec(c, g, as, pp, f, args)
			}
			if f.batch != "" {
				return runBatch(c, g, as, pp, f, args)
			}
			return runSubmit(c, g, as, pp, f, args)
		},
	}
	addSubmitFlags(c.Flags(), f, as)
	return c
}

// runSubmit is one submission: loaded once, routed, prepared and run by
// its backend (or followed: --status-poll-only).
func runSubmit(c *cobra.Command, g *globals, as adapters, pp prepareFunc, f *submitFlags, args []string) error {
	ctx, stderr := c.Context(), c.ErrOrStderr()
	// The command line is loaded once (argv, --properties-file,
	// spark-defaults.conf, $MASTER, $DEPLOY_MODE); every later step reads
	// this value.
	sub, err := submit.LoadSubmission(args, os.Environ())
	if err != nil {
		return err
	}
	// The conf's secrets are masked by value wherever spark-submit, the
	// driver or a server prints them (audit 3 N11).
	// A big properties file takes a while to load: a SIGINT or SIGTERM
	// meanwhile ends the run here (80), before anything is prepared.
	if err := ctx.Err(); err != nil {
		return err
	}
	redact.AddConfSecrets(sub.SparkConf())
	master := sub.Master()
	r := &run{f: f, master: master, quiet: g.quiet, verbose: g.verbose, stdout: c.OutOrStdout(), stderr: stderr}
	if f.pollOnly != "" {
		// Attaching resolves, bakes and submits nothing. The driver is
		// stopped on SIGINT/SIGTERM only when --kill-on-cancel is given: a
		// sensor that gives up must not stop a job it did not start.
		f.killOnCancel = f.killOnCancel && c.Flags().Changed("kill-on-cancel")
		kind, err := as.kindOf(c.Name(), master)
		if err != nil {
			return err
		}
		var a adapter
		if r.out, a, err = as.forKind(g, kind, outYAML); err != nil { // yaml: the objects of k8s --dry-run
			return err
		}
		r.attach = true
		be, err := a.New(r)
		if err != nil {
			return err
		}
		o, err := be.Attach(ctx, f.pollOnly, &submit.Prepared{Sub: sub})
		if o == nil {
			if kind == submit.KindLocal {
				return exitcode.New(exitcode.Usage, fmt.Errorf("--status-poll-only: %w", err))
			}
			return err
		}
		return a.Render(r, o, err)
	}
	kind, err := as.route(c.Name(), sub)
	if err != nil {
		return err
	}
	var a adapter
	if r.out, a, err = as.forKind(g, kind, outYAML); err != nil {
		return err
	}
	if kind == submit.KindLocal {
		ignoreTargetsHere(g, f, c.Flags(), master, stderr)
		f.localSparkJars = localSparkJars(f.sparkSubmit, os.Getenv, exec.LookPath)
	}
	be, err := a.New(r)
	if err != nil {
		return err
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	so, err := submitOptions(ctx, f, sub, pp, rep)
	if err != nil {
		return err
	}
	o, err := pipeline.Submit(ctx, sub, so, be)
	if o == nil { // stopped before the backend, or nothing to render
		return prepareErr(f, err)
	}
	return a.Render(r, o, err)
}

// newIDCmd is `prebake status` or `prebake kill` (op).
func newIDCmd(g *globals, as adapters, op string) *cobra.Command {
	id := &idFlags{}
	c := &cobra.Command{
		Use:     op + " ID --master URL",
		Short:   map[string]string{"status": "Print a driver's state, as spark-submit --status", "kill": "Kill a driver, as spark-submit --kill"}[op],
		Example: as.idExamples(op),
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			kind, err := as.kindOf(c.Name(), id.master)
			if err != nil {
				return err
			}
			out, a, err := as.forKind(g, kind)
			if err != nil {
				return err
			}
			r := &run{id: id, master: id.master, out: out, quiet: g.quiet, verbose: g.verbose, stdout: c.OutOrStdout(), stderr: c.ErrOrStderr()}
			be, err := a.New(r)
			if err != nil {
				return err
			}
			call := be.Status
			if op == "kill" {
				call = be.Kill
			}
			ss, err := call(c.Context(), args[0])
			return a.RenderStates(r, op, ss, err)
		},
	}
	c.Flags().StringVar(&id.master, "master", "", "master URL: "+as.idMasters())
	c.Flags().StringArrayVarP(&id.conf, "conf", "c", nil, "Spark conf k=v for the credentials, as spark-submit --status/--kill take them (spark.kubernetes.authenticate.submission.*, spark.kubernetes.context, spark.kubernetes.appKillPodDeletionGracePeriod)")
	for _, a := range as {
		a.AddIDFlags(c.Flags())
	}
	return c
}

// idExamples are status or kill's (op) examples, the adapters'.
func (as adapters) idExamples(op string) string {
	var lines []string
	for _, a := range as {
		for _, e := range a.Describe().IDExamples {
			lines = append(lines, "  prebake "+op+" "+e)
		}
	}
	return strings.Join(lines, "\n")
}

// addSubmitFlags defines submit's flags on fs.
func addSubmitFlags(fs *pflag.FlagSet, f *submitFlags, as adapters) {
	f.resolve.pythonWired = true
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
	addStrictFlag(fs, &f.strict)
	fs.StringVar(&f.sparkHome, "spark-home", "", "with --image-target: where the base image keeps Spark (default /opt/spark); the local Spark is $SPARK_HOME")
	fs.StringVar(&f.batch, "batch", "", "k8s cluster mode: submit every application of FILE (one JSON array of spark-submit arguments per line; - for stdin) natively from this one process, without waiting for them; exit code: the highest of the results'")
	fs.IntVar(&f.parallel, "parallel", 16, "with --batch: submissions in flight at once")
	fs.BoolVar(&f.exec, "exec", false, "the arguments after -- are a Python program that starts its own JVM (python3 app.py, jupyter lab): rewrite $PYSPARK_SUBMIT_ARGS and run it with the new value; its exit code is prebake's")
	fs.StringVar(&f.pollOnly, "status-poll-only", "", "follow submission ID, made elsewhere, to its end; never submits (k8s://: namespace:driver-pod; spark://, mesos://: the submission ID)")
	for _, a := range as {
		a.AddFlags(fs)
	}
}

// newSubmitFlagSet returns a flag set with submit's flags bound to f (and
// to fresh adapters).
func newSubmitFlagSet(f *submitFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("submit", pflag.ContinueOnError)
	addSubmitFlags(fs, f, newAdapters())
	return fs
}
