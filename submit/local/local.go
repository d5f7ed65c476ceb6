// Package local runs submissions whose driver runs under spark-submit on
// this machine (submit.Route's KindLocal: local masters, YARN, Spark
// Connect, client mode on spark:// and mesos://): the real spark-submit with
// the rewritten argv, its exit code the result. Its Process is the one
// spark-submit runner, which the K8s backend uses too (client mode and its
// spark-submit submitter).
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

// Option configures a Backend (New). An option that cannot apply returns
// an errdefs.BadArgument naming it (errdefs.OptionOf).
type Option func(*options) error

type options struct {
	sparkSubmit    string
	program        []string
	timeout        time.Duration
	killGrace      time.Duration
	json           bool
	stdin          io.Reader
	stdout, stderr io.Writer
}

// makeOptions applies opts, then the defaults to what they left unset.
func makeOptions(opts []Option) (*options, error) {
	o := &options{}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.timeout < 0 {
		return nil, errdefs.Optionf(errdefs.BadArgument, "local.WithTimeout", "time limit %s: negative", o.timeout)
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
	return o, nil
}

// WithSparkSubmit sets the spark-submit binary to run. Required: without
// it Submit fails with an errdefs.BadArgument whose errdefs.OptionOf is
// "local.WithSparkSubmit".
func WithSparkSubmit(path string) Option {
	return func(o *options) error { o.sparkSubmit = path; return nil }
}

// WithPySparkProgram runs argv (a Python program that starts its own JVM
// through pyspark: python3 app.py, a notebook server) instead of
// spark-submit, with $PYSPARK_SUBMIT_ARGS set to the submission's
// arguments (Submission.PySparkSubmitArgs): pyspark's launch_gateway
// passes them to spark-submit. Its exit code is the result, as
// spark-submit's is. The default (nil) runs spark-submit.
func WithPySparkProgram(argv []string) Option {
	return func(o *options) error {
		if len(argv) == 0 {
			return errdefs.Optionf(errdefs.BadArgument, "local.WithPySparkProgram", "no program to run")
		}
		o.program = append([]string(nil), argv...)
		return nil
	}
}

// WithTimeout bounds the run: spark-submit gets SIGTERM, and the error is
// an errdefs.Timeout whose errdefs.OptionOf is "local.WithTimeout". The
// default (0) is none.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error { o.timeout = d; return nil }
}

// WithKillGrace sets how long spark-submit may take to stop after SIGTERM
// before it is killed. The default (and any d <= 0) is 30s.
func WithKillGrace(d time.Duration) Option {
	return func(o *options) error { o.killGrace = d; return nil }
}

// WithJSON says stdout is for the caller's result object, so
// spark-submit's stdout goes to stderr (redacted). The default is false.
func WithJSON(on bool) Option {
	return func(o *options) error { o.json = on; return nil }
}

// WithStdio sets spark-submit's stdin, stdout and stderr (stderr is
// redacted line by line). The defaults are no input (nil stdin) and
// discarded output (nil stdout or stderr).
func WithStdio(stdin io.Reader, stdout, stderr io.Writer) Option {
	return func(o *options) error { o.stdin, o.stdout, o.stderr = stdin, stdout, stderr; return nil }
}

// Result is the outcome of Submit. Its JSON form is one object (keys
// stable; empty ones omitted):
//
//	{
//	  "backend": "spark-submit",
//	  "master": "local[2]",            // userinfo removed
//	  "deployMode": "client",          // client|cluster
//	  "exitCode": 3,                   // the CLI's: prebake's own exit code for this run
//	  "driverExitCode": 3,             // spark-submit's exit code (absent when it never ran)
//	  "source": "driver",              // the CLI's: "driver" | "prebake"
//	  "reason": "Completed",           // Completed, Error, Timeout, Cancelled, NotStarted
//	  "message": "...",
//	  "logTail": ["..."],              // spark-submit's last lines, on failure
//	  "timings": {"started": "RFC3339", "finished": "...", "totalSeconds": 12.3}
//	}
type Result struct {
	Backend        string   `json:"backend"`
	Master         string   `json:"master"`
	DeployMode     string   `json:"deployMode"`
	DriverExitCode *int     `json:"driverExitCode,omitempty"`
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

// run runs the real spark-submit with sub's arguments (rewritten: no
// packages key, the jars as local paths or store URLs) for a submission
// whose driver runs here (submit.RunsHere), and returns when it exits. Its exit
// code is the driver's and is passed through as K8s exit codes are (codes
// prebake owns become 80, source "driver"). Its stdin, stdout and stderr are
// WithStdio's; stderr is redacted line by line. On ctx's end (SIGINT,
// SIGTERM) or WithTimeout's limit, spark-submit gets SIGTERM, then SIGKILL
// after WithKillGrace's grace. spark-submit (or WithPySparkProgram's
// program) runs with the submission's environment (Submission.Environ).
func (b *Backend) run(ctx context.Context, sub *submit.Submission) (*Result, error) {
	o := *b.o
	res := &Result{Backend: "spark-submit", DeployMode: sub.DeployMode()}
	res.Timings.Started = time.Now()
	res.Master = redact.URL(sub.Master())
	args, env := sub.Args(), sub.Environ()
	if len(o.program) > 0 {
		res.Backend = "exec"
		env = withEnv(env, submit.EnvPySparkSubmitArgs, sub.PySparkSubmitArgs())
		o.sparkSubmit, args = o.program[0], o.program[1:]
	}
	err := runLocal(ctx, args, env, &o, res)
	res.finish(time.Now(), err)
	return res, err
}

// runLocal runs o's spark-submit with args and the environment env ("K=V").
func runLocal(ctx context.Context, args, env []string, o *options, res *Result) error {
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
	run := &Process{Bin: bin, Args: args, Env: env, Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr, KillGrace: o.killGrace, TailLines: logTail}
	if o.json {
		// stdout carries only the result object.
		run.Stdout = nil
		run.StdoutToStderr = true
	}
	code, tail, err := run.Run(ctx)
	if err != nil {
		res.Reason = reasonNotStarted
		return errdefs.Errorf(errdefs.BadArgument, "running %s: %v", o.sparkSubmit, errors.Unwrap(err))
	}
	res.DriverExitCode = &code
	if ctx.Err() != nil {
		// The run was stopped from here: say so, and keep spark-submit's
		// own code for the record.
		res.LogTail = tail
		what, kind := "cancelled", errdefs.DriverFailed // as K8s and REST report a cancel: errdefs.DriverFailed, source prebake
		res.Reason = reasonCancelled
		if errors.Is(context.Cause(ctx), errTimeout) {
			res.Reason = reasonTimeout
			return errdefs.Optionf(errdefs.Timeout, "local.WithTimeout", "time limit of %s reached; spark-submit stopped with exit code %d", o.timeout, code)
		}
		return errdefs.Errorf(kind, "%s; spark-submit stopped with exit code %d", what, code)
	}
	if code != 0 {
		res.LogTail = tail
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

// Process is one run of spark-submit (or of a program that starts it: the
// Connect server's script, spark-pipelines, a PySpark program), the one
// runner of the backends: local masters, YARN, client mode on every master
// and the K8s backend's spark-submit submitter.
type Process struct {
	Bin  string
	Args []string
	// Env is the child's environment ("K=V"); nil is this process's.
	Env   []string
	Stdin io.Reader
	// Stdout and Stderr get the child's output (nil discards it); Stderr
	// is redacted line by line.
	Stdout, Stderr io.Writer
	// StdoutToStderr sends the child's stdout to Stderr too (redacted),
	// for a caller whose stdout is for a result object or who reads one
	// stream.
	StdoutToStderr bool
	// KillGrace is how long the child may take to stop after SIGTERM
	// (ctx done) before it is killed; <= 0 is 30s.
	KillGrace time.Duration
	// TailLines is how many of the last output lines Run returns.
	TailLines int
}

// Run runs p and waits for it. code is its exit code, 128+n when a signal
// n ended it, as a shell reports; tail its last TailLines lines of stderr
// (and stdout with StdoutToStderr). err is set only when it could not
// start. On ctx's end the child gets SIGTERM, then SIGKILL after
// KillGrace: with no terminal on stdin it runs in a process group of its
// own, and the whole group is signalled (a PySpark job's python driver,
// java's child, outlived a signal to java alone), and what survived the
// grace is killed with it. On a terminal, the terminal's own ^C reaches
// the whole foreground group, and a group of its own could not read it.
//
// Nothing of the child outlives prebake, even killed with SIGKILL (as
// Airflow's on_kill does): on Linux the child gets SIGTERM from the
// kernel when prebake dies (the parent-death signal), and, in a group of
// its own, a reaper (a shell that outlives prebake) gives the whole group
// SIGTERM, then SIGKILL after KillGrace (at most reaperGrace).
func (p *Process) Run(ctx context.Context) (code int, tail []string, err error) {
	cmd := exec.CommandContext(ctx, p.Bin, p.Args...)
	cmd.Env = p.Env
	cmd.Stdin = p.Stdin
	group := !isTerminal(p.Stdin)
	if group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	// The parent-death signal fires when the thread that forked the child
	// exits: this goroutine keeps its thread until the child is waited for.
	defer lockThread()()
	cmd.SysProcAttr = withParentDeath(cmd.SysProcAttr, syscall.SIGTERM)
	var rp *reaper
	if group {
		rp = startReaper(min(killGrace(p.KillGrace), reaperGrace))
		defer rp.stop()
	}
	cmd.Cancel = func() error {
		if group {
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.WaitDelay = killGrace(p.KillGrace)
	tw := &submit.TailWriter{Max: p.TailLines}
	stderr := p.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	lw := redact.NewLineWriter(stderr)
	defer lw.Close()
	cmd.Stderr = io.MultiWriter(lw, tw)
	cmd.Stdout = p.Stdout
	if p.StdoutToStderr {
		cmd.Stdout = cmd.Stderr
	}
	if err = cmd.Start(); err == nil {
		rp.watch(cmd.Process.Pid)
		err = cmd.Wait()
	}
	var ee *exec.ExitError
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
		return 0, nil, fmt.Errorf("running %s: %w", p.Bin, err)
	}
	if ctx.Err() != nil && group {
		// What survived SIGTERM and the grace (a python that ignores
		// SIGTERM) goes with spark-submit: nothing of a cancelled job is
		// left running.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return code, tw.Lines(), nil
}

// reaperGrace bounds how long the reaper gives a job to stop after
// SIGTERM once prebake is gone: whoever killed prebake expects the job to
// end soon after.
const reaperGrace = 10 * time.Second

// killGrace is d, or the default 30s when d <= 0.
func killGrace(d time.Duration) time.Duration {
	if d <= 0 {
		return 30 * time.Second
	}
	return d
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

// Backend is the local submit.Backend: the driver runs under spark-submit
// here (submit.Route's KindLocal), so there is no submission to attach to,
// ask about or kill.
type Backend struct{ o *options }

var _ submit.Backend = (*Backend)(nil)

// New returns the local backend with opts, checked: a bad option is an
// errdefs.BadArgument naming it.
func New(opts ...Option) (*Backend, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Backend{o: o}, nil
}

// Submit runs p.Sub with the real spark-submit (or WithPySparkProgram's
// program) and returns when it exits. The outcome is a *Result.
func (b *Backend) Submit(ctx context.Context, p *submit.Prepared) (submit.Outcome, error) {
	return b.run(ctx, p.Sub)
}

// Attach is an errdefs.BadArgument: spark-submit here is the driver.
func (b *Backend) Attach(context.Context, string, *submit.Prepared) (submit.Outcome, error) {
	return nil, errdefs.Optionf(errdefs.BadArgument, "local.Attach", "a local, YARN or client-mode driver runs under spark-submit: there is no submission to attach to")
}

// Status is an errdefs.BadArgument: spark-submit here is the driver.
func (b *Backend) Status(context.Context, string) ([]submit.DriverState, error) {
	return nil, errdefs.Errorf(errdefs.BadArgument, "status: a local, YARN or client-mode driver runs under spark-submit, which has no submission ID to ask about")
}

// Kill is an errdefs.BadArgument: spark-submit here is the driver.
func (b *Backend) Kill(context.Context, string) ([]submit.DriverState, error) {
	return nil, errdefs.Errorf(errdefs.BadArgument, "kill: a local, YARN or client-mode driver runs under spark-submit: stop that process")
}

// sparkHomeOf is the Spark home of a spark-submit path ($SPARK_HOME/bin/
// spark-submit), or "" for a bare name.
func sparkHomeOf(sparkSubmit string) string {
	if !strings.Contains(sparkSubmit, "/") {
		return ""
	}
	return filepath.Dir(filepath.Dir(sparkSubmit))
}
