// Package local runs submissions whose driver runs under spark-submit on
// this machine (local masters, YARN, client mode on spark:// and mesos://):
// the real spark-submit with the rewritten argv, its exit code the result.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// RunsHere reports whether the driver of sub runs under spark-submit on
// this machine, so that spark-submit's own exit code is the application's:
// local masters (local, local[N], local[*], local-cluster[…]), YARN (client
// mode, and cluster mode, where spark-submit waits for the application and
// fails with it), and client mode on spark:// and mesos://. K8s client
// mode stays with the K8s backend. The master and deploy mode are Spark's
// (flag, conf, $MASTER, $DEPLOY_MODE); a submission that names no master
// runs on spark-submit's default, local[*].
func RunsHere(sub *submit.Submission) bool {
	master := sub.Master()
	switch {
	case Master(master):
		return true
	case strings.HasPrefix(master, "spark://"), strings.HasPrefix(master, "mesos://"):
		return sub.DeployMode() != "cluster"
	}
	return false
}

// Master reports whether master always runs the driver under spark-submit
// on this machine: local, local[N], local[*], local-cluster[…] and YARN
// (whose cluster mode spark-submit follows to the end).
func Master(master string) bool {
	switch submit.ClusterKind(master) {
	case submit.ClusterLocal, submit.ClusterYARN:
		return true
	}
	return false
}

// Option configures Submit.
type Option func(*options)

type options struct {
	sparkSubmit    string
	program        []string
	env            []string
	timeout        time.Duration
	killGrace      time.Duration
	json           bool
	stdin          io.Reader
	stdout, stderr io.Writer
}

// makeOptions applies opts, then the defaults to what they left unset.
func makeOptions(opts []Option) *options {
	o := &options{}
	for _, opt := range opts {
		opt(o)
	}
	if o.killGrace <= 0 {
		o.killGrace = 30 * time.Second
	}
	if o.stdout == nil {
		o.stdout = io.Discard
	}
	if o.stderr == nil {
		o.stderr = io.Discard
	}
	return o
}

// WithSparkSubmit sets the spark-submit binary to run. Required: without
// it Submit fails with an errdefs.BadArgument whose errdefs.OptionOf is
// "local.WithSparkSubmit".
func WithSparkSubmit(path string) Option { return func(o *options) { o.sparkSubmit = path } }

// WithPySparkProgram runs argv (a Python program that starts its own JVM
// through pyspark: python3 app.py, a notebook server) instead of
// spark-submit, with $PYSPARK_SUBMIT_ARGS set to the submission's
// arguments (Submission.PySparkSubmitArgs): pyspark's launch_gateway
// passes them to spark-submit. Its exit code is the result, as
// spark-submit's is. The default (nil) runs spark-submit.
func WithPySparkProgram(argv []string) Option {
	return func(o *options) { o.program = append([]string(nil), argv...) }
}

// WithEnv sets spark-submit's environment ("K=V"). The default (nil) is
// this process's.
func WithEnv(env []string) Option { return func(o *options) { o.env = env } }

// WithTimeout bounds the run: spark-submit gets SIGTERM, and the error is
// an errdefs.Timeout whose errdefs.OptionOf is "local.WithTimeout". The
// default (0) is none.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithKillGrace sets how long spark-submit may take to stop after SIGTERM
// before it is killed. The default (and any d <= 0) is 30s.
func WithKillGrace(d time.Duration) Option { return func(o *options) { o.killGrace = d } }

// WithJSON says stdout is for the result object (-o json), so
// spark-submit's stdout goes to stderr. The default is false.
func WithJSON(on bool) Option { return func(o *options) { o.json = on } }

// WithStdio sets spark-submit's stdin, stdout and stderr (stderr is
// redacted line by line). The defaults are no input (nil stdin) and
// discarded output (nil stdout or stderr).
func WithStdio(stdin io.Reader, stdout, stderr io.Writer) Option {
	return func(o *options) { o.stdin, o.stdout, o.stderr = stdin, stdout, stderr }
}

// Result is the outcome of Submit. With -o json it is printed to
// stdout as one object (keys stable; empty ones omitted):
//
//	{
//	  "backend": "spark-submit",
//	  "master": "local[2]",            // userinfo removed
//	  "deployMode": "client",          // client|cluster
//	  "exitCode": 3,                   // prebake's own exit code for this run
//	  "driverExitCode": 3,             // spark-submit's exit code (absent when it never ran)
//	  "source": "driver",              // "driver" | "prebake"
//	  "reason": "Completed",           // Completed, Error, Timeout, Cancelled, NotStarted
//	  "message": "...",
//	  "logTail": ["..."],              // spark-submit's last lines, on failure
//	  "timings": {"started": "RFC3339", "finished": "...", "totalSeconds": 12.3}
//	}
type Result struct {
	Backend    string `json:"backend"`
	Master     string `json:"master"`
	DeployMode string `json:"deployMode"`
	// ExitCode and Source are the process's exit code and who decided it
	// (prebake, driver, ...): the caller that maps errors to exit codes
	// (cmd) sets them from Err() before it prints the result.
	ExitCode       int      `json:"exitCode"`
	DriverExitCode *int     `json:"driverExitCode,omitempty"`
	Source         string   `json:"source"`
	Reason         string   `json:"reason,omitempty"`
	Message        string   `json:"message,omitempty"`
	LogTail        []string `json:"logTail,omitempty"`
	Timings        struct {
		Started      time.Time `json:"started"`
		Finished     time.Time `json:"finished"`
		TotalSeconds float64   `json:"totalSeconds"`
	} `json:"timings"`

	err error
}

const (
	reasonCompleted  = "Completed"
	reasonError      = "Error"
	reasonNotStarted = "NotStarted"
	reasonCancelled  = "Cancelled"
	reasonTimeout    = "Timeout"
)

var errTimeout = errors.New("time limit reached")

// logTail is how many of spark-submit's last lines a failure keeps.
const logTail = 50

// Submit runs the real spark-submit with sub's arguments (rewritten: no
// packages key, the jars as local paths or store URLs) for a submission
// whose driver runs here (RunsHere), and returns when it exits. Its exit
// code is the driver's and is passed through as K8s exit codes are (codes
// prebake owns become 80, source "driver"). Its stdin, stdout and stderr are
// WithStdio's; stderr is redacted line by line. On ctx's end (SIGINT,
// SIGTERM) or WithTimeout's limit, spark-submit gets SIGTERM, then SIGKILL
// after WithKillGrace's grace.
func Submit(ctx context.Context, sub *submit.Submission, opts ...Option) (*Result, error) {
	o := makeOptions(opts)
	res := &Result{Backend: "spark-submit", DeployMode: sub.DeployMode()}
	res.Timings.Started = time.Now()
	res.Master = redact.URL(sub.Master())
	args := sub.Args()
	if len(o.program) > 0 {
		res.Backend = "exec"
		env := o.env
		if env == nil {
			env = os.Environ()
		}
		o.env = withEnv(env, submit.EnvPySparkSubmitArgs, sub.PySparkSubmitArgs())
		o.sparkSubmit, args = o.program[0], o.program[1:]
	}
	err := runLocal(ctx, args, o, res)
	res.finish(time.Now(), err)
	return res, err
}

func runLocal(ctx context.Context, args []string, o *options, res *Result) error {
	if o.sparkSubmit == "" {
		res.Reason = reasonNotStarted
		return errdefs.Optionf(errdefs.BadArgument, "local.WithSparkSubmit", "no spark-submit: give its path, set $SPARK_HOME or put spark-submit on $PATH")
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errTimeout)
		defer cancel()
	}
	bin := o.sparkSubmit
	if prog, rest, ok := submit.ConnectServerProgram(args, sparkHomeOf(o.sparkSubmit)); ok {
		// The Connect server's script runs spark-submit itself (through
		// spark-daemon.sh; --wait or SPARK_NO_DAEMONIZE keeps it in the
		// foreground, and its exit code is the server's).
		bin, args = prog, rest
	} else if program, rest, ok := submit.SplitProgram(args); ok {
		// A spark-pipelines command line runs its own CLI (in $SPARK_HOME/bin).
		bin, args = submit.PipelinesBin(program, o.sparkSubmit), rest
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = o.env
	cmd.Stdin = o.stdin
	// spark-submit execs java in its own process; SIGTERM runs Spark's
	// shutdown hooks (SparkContext.stop, temp dirs removed). With no
	// terminal it runs in its own process group, and a cancel signals the
	// group: a PySpark job's python driver, java's child, outlived a signal
	// to java alone (an Airflow task kill left it running). On a terminal, the terminal's own ^C reaches the whole
	// foreground group, and a group of its own could not read the terminal.
	group := !isTerminal(o.stdin)
	if group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Cancel = func() error {
		if group {
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.WaitDelay = o.killGrace
	tail := &submit.TailWriter{Max: logTail}
	lw := redact.NewLineWriter(o.stderr)
	defer lw.Close()
	cmd.Stderr = io.MultiWriter(lw, tail)
	cmd.Stdout = o.stdout
	if o.json {
		// stdout carries only the result object.
		cmd.Stdout = cmd.Stderr
	}
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if code < 0 { // killed by a signal: the shell's 128+n
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = 128 + int(syscall.SIGKILL)
			}
		}
	default:
		res.Reason = reasonNotStarted
		return errdefs.Errorf(errdefs.BadArgument, "running %s: %v", o.sparkSubmit, err)
	}
	res.DriverExitCode = &code
	if ctx.Err() != nil && group {
		// What survived SIGTERM and the grace (a python that ignores
		// SIGTERM) goes with spark-submit: nothing of a cancelled job is
		// left running.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		// The run was stopped from here: say so, and keep spark-submit's
		// own code for the record.
		res.LogTail = tail.Lines()
		what, kind := "cancelled", errdefs.DriverFailed // as K8s and REST report a cancel: errdefs.DriverFailed, source prebake
		res.Reason = reasonCancelled
		if errors.Is(context.Cause(ctx), errTimeout) {
			res.Reason = reasonTimeout
			return errdefs.Optionf(errdefs.Timeout, "local.WithTimeout", "time limit of %s reached; spark-submit stopped with exit code %d", o.timeout, code)
		}
		return errdefs.Errorf(kind, "%s; spark-submit stopped with exit code %d", what, code)
	}
	if code != 0 {
		res.LogTail = tail.Lines()
	}
	what := "spark-submit"
	if len(o.program) > 0 {
		what = o.program[0]
	}
	return submit.DriverExit(code, fmt.Sprintf("%s exited with code %d", what, code))
}

// withEnv returns env ("K=V") with k set to v, every other entry kept.
func withEnv(env []string, k, v string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, k+"=") {
			out = append(out, e)
		}
	}
	return append(out, k+"="+v)
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// finish records err and sets the reason and timings from it.
func (r *Result) finish(now time.Time, err error) {
	r.err = err
	if r.Reason == "" {
		switch {
		case err == nil:
			r.Reason = reasonCompleted
		default:
			r.Reason = reasonError
		}
	}
	if err != nil {
		r.Message = redact.Line(err.Error())
	}
	r.Timings.Finished = now
	r.Timings.TotalSeconds = float64(now.Sub(r.Timings.Started).Round(time.Millisecond)) / float64(time.Second)
}

// SameFile reports whether a and b name the same file (after symlinks), for
// prebake installed as spark-submit: the spark-submit it runs must not be
// itself.
func SameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

// Err is nil when the driver succeeded, else the run's error.
func (r *Result) Err() error { return r.err }

// Backend is the local submit.Backend: Submit with its Options.
type Backend struct{ Options []Option }

var _ submit.Backend = Backend{}

// Submit runs sub (see the package function Submit); the outcome is a
// *Result.
func (b Backend) Submit(ctx context.Context, sub *submit.Submission) (submit.Outcome, error) {
	return Submit(ctx, sub, b.Options...)
}

// sparkHomeOf is the Spark home of a spark-submit path ($SPARK_HOME/bin/
// spark-submit), or "" for a bare name.
func sparkHomeOf(sparkSubmit string) string {
	if !strings.Contains(sparkSubmit, "/") {
		return ""
	}
	return filepath.Dir(filepath.Dir(sparkSubmit))
}
