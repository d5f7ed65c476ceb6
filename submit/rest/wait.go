package rest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// Result is the outcome of a REST submission (or of following one).
// Its JSON form is one object (keys stable; empty ones omitted):
//
//	{
//	  "backend": "rest",
//	  "submissionId": "driver-20261129101010-0001",
//	  "master": "spark://m1:7077,m2:7077",  // as given (no credentials)
//	  "restUrl": "http://m2:6066",          // the REST server that answered last
//	  "state": "FINISHED",                  // last driverState seen: SUBMITTED|RUNNING|RELAUNCHING|UNKNOWN|
//	                                        // FINISHED|FAILED|KILLED|ERROR (Mesos: QUEUED|RUNNING|RETRYING|FINISHED),
//	                                        // or "" when nothing was seen
//	  "taskState": "TASK_FINISHED",         // Mesos: the task state parsed from the status message
//	  "workerId": "worker-…", "workerHostPort": "10.0.0.5:40000",
//	  "exitCode": 0,                        // the CLI's: prebake's exit code for this run
//	  "source": "driver",                   // the CLI's: where exitCode comes from, "driver" | "prebake"
//	  "reason": "FINISHED",                 // the terminal state (FINISHED, FAILED, KILLED, ERROR, TASK_FAILED…)
//	                                        // or prebake's: Timeout, Cancelled, NotFound, Evicted,
//	                                        // Unavailable, SubmitFailed, Rejected, ProtocolVersion
//	  "message": "...",                     // one human-readable line
//	  "transitions": [{"state": "RUNNING", "at": "RFC3339", "workerId": "…", "message": "…"}],
//	  "timings": {"started": "RFC3339", "submitted": "…", "running": "…", "finished": "…",
//	              "submitSeconds": 0.1, "pendingSeconds": 2, "runSeconds": 30, "totalSeconds": 32.1}
//	}
type Result struct {
	Backend        string       `json:"backend"`
	SubmissionID   string       `json:"submissionId,omitempty"`
	Master         string       `json:"master"`
	RestURL        string       `json:"restUrl,omitempty"`
	State          string       `json:"state"`
	TaskState      string       `json:"taskState,omitempty"`
	WorkerID       string       `json:"workerId,omitempty"`
	WorkerHostPort string       `json:"workerHostPort,omitempty"`
	Reason         string       `json:"reason,omitempty"`
	Message        string       `json:"message,omitempty"`
	Transitions    []Transition `json:"transitions,omitempty"`
	// LogTail is a FAILED driver's last stderr lines, from its worker's
	// web UI when the master's UI names it (WithMasterUI).
	LogTail []string `json:"logTail,omitempty"`
	Timings Timings  `json:"timings"`

	err error
}

// Transition is one driver state change seen while polling.
type Transition struct {
	State          string    `json:"state"`
	At             time.Time `json:"at"`
	WorkerID       string    `json:"workerId,omitempty"`
	WorkerHostPort string    `json:"workerHostPort,omitempty"`
	Message        string    `json:"message,omitempty"`
}

// Timings are the wall-clock milestones of the run (the same shape as
// the K8s backend's, so their JSON forms read alike).
type Timings = submit.Timings

// Err is nil on success, else the error; its errdefs kind says what failed.
func (r *Result) Err() error { return r.err }

func (r *Result) finish(now time.Time, reason string, err error) *Result {
	r.err = err
	if reason != "" {
		r.Reason = reason
	}
	if err != nil {
		r.Message = err.Error()
	}
	r.sanitize()
	r.Timings.Finish(now)
	return r
}

// sanitize redacts and bounds (redact.Message) every text of r that the
// master or the driver wrote, once, before r reaches any output (text,
// JSON, a result file).
func (r *Result) sanitize() {
	for _, p := range []*string{&r.State, &r.TaskState, &r.WorkerID, &r.WorkerHostPort, &r.Reason, &r.Message} {
		*p = redact.Message(*p)
	}
	for i := range r.Transitions {
		t := &r.Transitions[i]
		t.State, t.WorkerID, t.WorkerHostPort, t.Message = redact.Message(t.State), redact.Message(t.WorkerID), redact.Message(t.WorkerHostPort), redact.Message(t.Message)
	}
	for i, l := range r.LogTail {
		r.LogTail[i] = redact.Message(l)
	}
}

var errRestTimeout = errors.New("time limit reached")

// submitREST builds the CreateSubmissionRequest from sub (rewritten
// spark-submit arguments), posts it, and polls the driver to its end. The
// result's Err carries the error kind: nil for FINISHED, errdefs.DriverFailed
// (source driver) for FAILED/KILLED/ERROR, errdefs.Timeout on WithTimeout's
// limit (its errdefs.OptionOf is "rest.WithTimeout"); when ctx is cancelled
// (SIGINT/SIGTERM) the driver is killed first unless WithKillOnCancel(false).
func submitREST(ctx context.Context, sub *submit.Submission, opts ...Option) *Result {
	o, err := makeOptions(opts)
	if err != nil {
		return (&Result{Backend: "rest"}).finish(time.Now(), "SubmitFailed", err)
	}
	res := &Result{Backend: "rest", Timings: Timings{Started: o.now()}}
	if m, ok := sub.GivenMaster(); ok {
		res.Master = redact.URL(m)
	}
	req, err := BuildCreateRequest(sub, opts...)
	if err != nil {
		return res.finish(o.now(), "SubmitFailed", err)
	}
	master := req.SparkProperties["spark.master"]
	res.Master = redact.URL(master)
	c, err := NewClient(master, opts...)
	if err != nil {
		return res.finish(o.now(), "SubmitFailed", err)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	fmt.Fprintf(o.log, "prebake: submitting %s (%s) to %s\n", req.SparkProperties["spark.app.name"], redact.URL(req.AppResource), strings.Join(c.urls, ","))
	r, err := c.Create(ctx, req)
	if r != nil {
		res.RestURL = r.Master
	}
	if err != nil {
		if ctxErr := c.ctxResult(ctx, res, ""); ctxErr != nil {
			fmt.Fprintln(o.log, "prebake: interrupted while submitting: the driver may have been submitted; check the master UI")
			return ctxErr
		}
		return res.finish(o.now(), restReason(err, "SubmitFailed"), err)
	}
	now := o.now()
	res.SubmissionID = r.SubmissionID
	res.Timings.Submitted = &now
	if r.Message != "" {
		fmt.Fprintf(o.log, "prebake: %s\n", redact.Message(r.Message))
	} else {
		fmt.Fprintf(o.log, "prebake: submitted as %s\n", r.SubmissionID)
	}
	return c.follow(ctx, r.SubmissionID, res)
}

// attachREST follows a submission made elsewhere to its end, with
// submitREST's error kinds.
func attachREST(ctx context.Context, master, id string, opts ...Option) *Result {
	o, err := makeOptions(opts)
	if err != nil {
		return (&Result{Backend: "rest", SubmissionID: id, Master: redact.URL(master)}).finish(time.Now(), "SubmitFailed", err)
	}
	res := &Result{Backend: "rest", SubmissionID: id, Master: redact.URL(master), Timings: Timings{Started: o.now()}}
	c, err := NewClient(master, opts...)
	if err != nil {
		return res.finish(o.now(), "SubmitFailed", err)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.follow(ctx, id, res)
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.o.timeout > 0 {
		return context.WithTimeoutCause(ctx, c.o.timeout, errRestTimeout)
	}
	return context.WithCancel(ctx)
}

func restReason(err error, def string) string {
	switch {
	case errors.Is(err, ErrProtocolVersion):
		return "ProtocolVersion"
	case errors.Is(err, ErrRejected):
		return "Rejected"
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrNoAliveMaster), errdefs.KindOf(err) == errdefs.Unavailable:
		return "Unavailable"
	}
	return def
}

// ctxResult finishes res when ctx is done: a timeout (errdefs.Timeout), or a
// cancellation, which kills id first when asked to.
func (c *Client) ctxResult(ctx context.Context, res *Result, id string) *Result {
	if ctx.Err() == nil {
		return nil
	}
	if errors.Is(context.Cause(ctx), errRestTimeout) {
		msg := fmt.Sprintf("time limit of %s reached", c.o.timeout)
		if id != "" {
			msg += fmt.Sprintf(" with the driver %s (left running; stop it with: %s)", restOrUnknown(res.State), submit.ShellQuote([]string{"prebake", "kill", id, "--master", res.Master}))
		}
		return res.finish(c.o.now(), "Timeout", errdefs.Optionf(errdefs.Timeout, "rest.WithTimeout", "%s", msg))
	}
	msg, option := "cancelled", ""
	if id != "" && c.o.killOnCancel {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		r, err := c.Kill(kctx, id)
		switch {
		case err != nil:
			msg += fmt.Sprintf("; killing %s failed: %v", id, err)
		default:
			msg += fmt.Sprintf("; %s", restOrUnknown(r.Message))
		}
		// The caller prints msg, the error's: once.
	} else if id != "" {
		msg += fmt.Sprintf("; the driver %s is left running", id)
		option = "rest.WithKillOnCancel" // it says why
	}
	err := errdefs.New(errdefs.DriverFailed, errors.New(msg))
	if option != "" {
		err = errdefs.Optionf(errdefs.DriverFailed, option, "%s", msg)
	}
	return res.finish(c.o.now(), "Cancelled", err)
}

var restTaskStateRE = regexp.MustCompile(`(?m)^\s*state:\s*(TASK_[A-Z_]+)`)

// follow polls id until a terminal state, ctx's end or too many errors.
func (c *Client) follow(ctx context.Context, id string, res *Result) *Result {
	o := c.o
	fails := 0
	for {
		r, err := c.statusRound(ctx, id)
		if res2 := c.ctxResult(ctx, res, id); res2 != nil {
			return res2
		}
		if err != nil {
			var def *restDefinitiveError
			if errors.As(err, &def) {
				return res.finish(o.now(), restReason(err, "Rejected"), err)
			}
			fails++
			if fails >= o.maxPollErrors {
				last := "no state seen yet"
				if res.State != "" {
					last = "last seen " + res.State
				}
				return res.finish(o.now(), "Unavailable", errdefs.New(errdefs.Unavailable,
					fmt.Errorf("driver %s: its state is unknown (%s) after %d failed polls: %w", id, last, fails, err)))
			}
			d := c.backoffFor(fails)
			fmt.Fprintf(o.log, "prebake: polling %s failed (%d/%d): %s; retrying in %s\n", id, fails, o.maxPollErrors, restRedactErr(err), d.Round(time.Millisecond))
			if submit.Sleep(ctx, d) != nil {
				return c.ctxResult(ctx, res, id)
			}
			continue
		}
		fails = 0
		res.RestURL = r.Master
		if !r.OK() {
			if res.State == "" {
				return res.finish(o.now(), "NotFound", errdefs.New(errdefs.NotFound, fmt.Errorf(
					"%w: %s does not know %s (a wrong id, or a completed driver evicted past spark.deploy.retainedDrivers=200)", ErrSubmissionNotFound, r.Master, id)))
			}
			return res.finish(o.now(), "Evicted", errdefs.New(errdefs.NotFound, fmt.Errorf(
				"%w: %s forgot %s after it was %s (evicted past spark.deploy.retainedDrivers, or the master restarted without recovery); its final state is unknown",
				ErrSubmissionNotFound, r.Master, id, res.State)))
		}
		c.observe(res, r)
		if done := c.terminal(ctx, res, r); done != nil {
			return done
		}
		d := time.Duration(float64(o.pollInterval) * (0.9 + 0.2*rand.Float64()))
		if submit.Sleep(ctx, d) != nil {
			return c.ctxResult(ctx, res, id)
		}
	}
}

// observe records and prints a state transition.
func (c *Client) observe(res *Result, r *Response) {
	task := ""
	if c.mesos {
		task = restTaskState(r.Message)
	}
	if r.DriverState == res.State && r.WorkerID == res.WorkerID && task == res.TaskState {
		return
	}
	now := c.o.now()
	res.State, res.WorkerID, res.WorkerHostPort, res.TaskState = r.DriverState, r.WorkerID, r.WorkerHostPort, task
	msg := restFirstLines(r.Message)
	res.Transitions = append(res.Transitions, Transition{State: r.DriverState, At: now, WorkerID: r.WorkerID, WorkerHostPort: r.WorkerHostPort, Message: msg})
	if r.DriverState == "RUNNING" && res.Timings.Running == nil {
		res.Timings.Running = &now
	}
	line := fmt.Sprintf("prebake: driver %s is %s", r.SubmissionID, r.DriverState)
	if r.WorkerID != "" {
		line += " on " + r.WorkerID
		if r.WorkerHostPort != "" {
			line += " (" + r.WorkerHostPort + ")"
		}
	}
	switch r.DriverState {
	case "RELAUNCHING":
		line += " (supervised driver restarting)"
	case "UNKNOWN":
		line += " (master recovering; waiting)"
	case "RETRYING":
		line += " (dispatcher retrying)"
	}
	if c.mesos && res.TaskState != "" {
		line += " [" + res.TaskState + "]"
	} else if msg != "" {
		line += ": " + msg
	}
	fmt.Fprintln(c.o.log, line)
}

func restTaskState(msg string) string {
	if m := restTaskStateRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// terminal finishes res when r is a terminal state.
func (c *Client) terminal(ctx context.Context, res *Result, r *Response) *Result {
	now := c.o.now()
	id := r.SubmissionID
	detail := restFirstLines(r.Message)
	if detail != "" {
		detail = ": " + detail
	}
	if c.mesos {
		if r.DriverState != "FINISHED" {
			return nil
		}
		switch ts := restTaskState(r.Message); ts {
		case "TASK_FINISHED":
			return res.finish(now, ts, nil)
		case "":
			return res.finish(now, "FINISHED", errdefs.DriverError(fmt.Errorf("driver %s FINISHED without a task state in its message; its outcome is unknown%s", id, detail)))
		default:
			return res.finish(now, ts, errdefs.DriverError(fmt.Errorf("driver %s ended with %s", id, ts)))
		}
	}
	switch r.DriverState {
	case "FINISHED":
		return res.finish(now, "FINISHED", nil)
	case "FAILED":
		page, tail := c.driverLog(ctx, id, r.WorkerID)
		res.LogTail = tail
		return res.finish(now, "FAILED", errdefs.DriverError(fmt.Errorf("driver %s FAILED (non-zero exit; %s)%s%s", id, driverLogHint(id, r.WorkerID, r.WorkerHostPort, page), detail, java17Hint(tail))))
	case "KILLED":
		return res.finish(now, "KILLED", errdefs.DriverError(fmt.Errorf("driver %s was KILLED%s", id, detail)))
	case "ERROR":
		return res.finish(now, "ERROR", errdefs.DriverError(fmt.Errorf("driver %s ERROR: it could not be launched or run (e.g. a jar could not be fetched)%s", id, detail)))
	}
	return nil
}

// statusREST asks each master for id's state once (with retries on
// network errors), as spark-submit --status. An unknown id is
// errdefs.NotFound.
func statusREST(ctx context.Context, master, id string, opts ...Option) (*Response, error) {
	c, err := NewClient(master, opts...)
	if err != nil {
		return nil, err
	}
	r, err := c.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	if !r.OK() {
		return r, errdefs.New(errdefs.NotFound, fmt.Errorf("%w: %s does not know %s (a wrong id, or a completed driver evicted past spark.deploy.retainedDrivers)", ErrSubmissionNotFound, r.Master, id))
	}
	return r, nil
}

// killREST posts a kill for id, as spark-submit --kill. An unknown or
// finished id is errdefs.NotFound.
func killREST(ctx context.Context, master, id string, opts ...Option) (*Response, error) {
	c, err := NewClient(master, opts...)
	if err != nil {
		return nil, err
	}
	return c.Kill(ctx, id)
}

// Backend is the standalone/Mesos REST submit.Backend (New).
type Backend struct {
	master string
	opts   []Option
}

var _ submit.Backend = (*Backend)(nil)

// New returns the REST backend of master (spark://h1[:port][,h2[:port]…]
// or mesos://host[:port]: the one Attach, Status and Kill ask; Submit
// posts to its submission's) with opts, checked: a bad value is an
// errdefs.BadArgument naming the option.
func New(master string, opts ...Option) (*Backend, error) {
	if _, err := makeOptions(opts); err != nil {
		return nil, err
	}
	return &Backend{master: master, opts: opts}, nil
}

// Submit builds the CreateSubmissionRequest from p.Sub (rewritten
// spark-submit arguments), posts it, and polls the driver to its end. The
// outcome is a *Result, whose Err is the error: nil for FINISHED,
// errdefs.DriverFailed (source driver) for FAILED/KILLED/ERROR,
// errdefs.Timeout on WithTimeout's limit (its errdefs.OptionOf is
// "rest.WithTimeout"); when ctx is cancelled (SIGINT/SIGTERM) the driver is
// killed first unless WithKillOnCancel(false).
func (b *Backend) Submit(ctx context.Context, p *submit.Prepared) (submit.Outcome, error) {
	res := submitREST(ctx, p.Sub, b.opts...)
	return res, res.Err()
}

// Attach follows id, submitted elsewhere, to its end with Submit's error
// kinds; it submits nothing. The outcome is a *Result.
func (b *Backend) Attach(ctx context.Context, id string, _ *submit.Prepared) (submit.Outcome, error) {
	res := attachREST(ctx, b.master, id, b.opts...)
	return res, res.Err()
}

// DriverState is a driver as the master reports it (Status, Kill): the
// status document of spark:// and mesos:// masters in JSON (empty fields
// omitted).
type DriverState struct {
	SubmissionID       string `json:"submissionId"`
	Master             string `json:"master"`
	RestURL            string `json:"restUrl,omitempty"`
	State              string `json:"state,omitempty"`
	WorkerID           string `json:"workerId,omitempty"`
	WorkerHostPort     string `json:"workerHostPort,omitempty"`
	Message            string `json:"message,omitempty"`
	ServerSparkVersion string `json:"serverSparkVersion,omitempty"`
}

// DriverID is the submission ID.
func (s DriverState) DriverID() string { return s.SubmissionID }

// state is the answer r about id as one DriverState (nil: no answer).
func (b *Backend) state(id string, r *Response) []submit.DriverState {
	if r == nil {
		return nil
	}
	m := redact.Message // the master's texts: redacted and bounded
	return []submit.DriverState{DriverState{SubmissionID: id, Master: redact.URL(b.master), RestURL: r.Master, State: m(r.DriverState),
		WorkerID: m(r.WorkerID), WorkerHostPort: m(r.WorkerHostPort), Message: m(r.Message), ServerSparkVersion: m(r.ServerSparkVersion)}}
}

// Status asks each master for id's state once (with retries on network
// errors), as spark-submit --status: one DriverState, or none when no
// master answered. An unknown id is errdefs.NotFound (with the master's
// answer).
func (b *Backend) Status(ctx context.Context, id string) ([]submit.DriverState, error) {
	r, err := statusREST(ctx, b.master, id, b.opts...)
	return b.state(id, r), err
}

// Kill posts a kill for id, as spark-submit --kill: one DriverState (its
// Message the master's answer), or none when no master answered. An
// unknown or finished id is errdefs.NotFound.
func (b *Backend) Kill(ctx context.Context, id string) ([]submit.DriverState, error) {
	r, err := killREST(ctx, b.master, id, b.opts...)
	return b.state(id, r), err
}

// driverLogHint says where a standalone driver's log is: the worker's
// work/<driver-id>/stderr (under its SPARK_WORKER_DIR, default
// $SPARK_HOME/work) and the worker UI's log page (port 8081 unless the
// worker sets another). hostPort is the worker's RPC address, not its UI.
func driverLogHint(id, workerID, hostPort, page string) string {
	host := hostPort
	if h, _, err := net.SplitHostPort(hostPort); err == nil {
		host = h
	}
	if host == "" {
		return fmt.Sprintf("its log is work/%s/stderr under the worker's SPARK_WORKER_DIR (default $SPARK_HOME/work)", id)
	}
	worker := host
	if workerID != "" {
		worker = workerID + " on " + host
	}
	if page != "" {
		return fmt.Sprintf("its log is work/%s/stderr under the SPARK_WORKER_DIR of worker %s, shown at %s", id, worker, page)
	}
	ui := url.URL{Scheme: "http", Host: net.JoinHostPort(host, "8081"), Path: "/logPage/", RawQuery: url.Values{"driverId": {id}, "logType": {"stderr"}}.Encode()}
	return fmt.Sprintf("its log is work/%s/stderr under the SPARK_WORKER_DIR (default $SPARK_HOME/work) of worker %s; the worker UI shows it at %s (with the UI on its default port)", id, worker, ui.String())
}

// java17Hint explains Spark 3.x's failure on Java 17 in a REST-launched
// driver, which gets none of the --add-opens that spark-submit's launcher
// adds ("" when tail does not show it).
func java17Hint(tail []string) string {
	for _, l := range tail {
		if strings.Contains(l, "IllegalAccessError") && strings.Contains(l, "sun.nio.ch") {
			return "; the driver runs on Java 17+ without the --add-opens that spark-submit adds in client mode (Spark's own behaviour in cluster mode through REST): pass --driver-java-options '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED'"
		}
	}
	return ""
}
