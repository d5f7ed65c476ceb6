package submit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
)

// Backend runs a prepared (rewritten) submission on one kind of cluster
// manager and follows the driver to its end. Backends are constructed
// values (k8s.New, rest.New, local.New) whose options are checked once,
// when they are made; a backend returns its Outcome and prints no result
// (the caller renders it). Every backend reads the master, deploy mode,
// conf and environment from the Submission, with Spark's precedence.
//
// The backends live beside this package: submit/k8s (the only package that
// imports client-go), submit/rest (standalone and Mesos over Spark's REST
// protocol) and submit/local (the one spark-submit runner: local masters,
// YARN and client mode on every master). Route picks one.
type Backend interface {
	// Submit runs p and follows its driver to the end.
	Submit(ctx context.Context, p *Prepared) (Outcome, error)
	// Attach follows id, submitted elsewhere, to its end exactly as Submit
	// follows its own; it submits nothing. p carries the submission as
	// given (its master and credentials conf).
	Attach(ctx context.Context, id string, p *Prepared) (Outcome, error)
	// Status returns the state of id (spark-submit --status).
	Status(ctx context.Context, id string) ([]DriverState, error)
	// Kill stops id (spark-submit --kill) and returns what it tried.
	Kill(ctx context.Context, id string) ([]DriverState, error)
}

// Prepared is what a backend runs: the submission after resolve, bake and
// rewrite.
type Prepared struct {
	// Sub is the rewritten command line, loaded once (for Attach, and for
	// a submission that needed no rewrite, the one given).
	Sub *Submission
	// DriverSparkVersion is the Spark version of the driver's baked image,
	// as its base's jars say; "" when nothing was baked.
	DriverSparkVersion string
}

// Outcome is what a backend reports at the end of a run.
type Outcome interface {
	// Err is nil when the driver succeeded, else the error; its kind
	// (package errdefs) says what failed, and errdefs.Driver carries the
	// driver's own exit code.
	Err() error
}

// DriverState is one driver as Status or Kill found it. Each backend
// returns its own type (k8s.DriverStatus, rest.DriverState), which the
// caller renders.
type DriverState interface {
	// DriverID is the driver's submission ID, as Status and Kill take it.
	DriverID() string
}

// Kind is the backend a submission goes to (Route).
type Kind string

// The backend kinds.
const (
	// KindLocal runs spark-submit here: local masters, YARN, Spark
	// Connect, and client mode on every master (the driver is
	// spark-submit's JVM).
	KindLocal Kind = "local"
	// KindK8s submits to a k8s:// master and follows the driver pod; in
	// client mode its driver is spark-submit, run by submit/local's runner.
	KindK8s Kind = "k8s"
	// KindREST submits to spark:// and mesos:// masters in cluster mode
	// over Spark's REST submission protocol.
	KindREST Kind = "rest"
)

// ErrNoMaster is Route's error for a submission without a master that
// needs one (status, kill and attach name the master they ask).
var ErrNoMaster = errdefs.Optionf(errdefs.BadArgument, "submit.Route.master", "no master")

// KindOf returns the backend of a master URL whatever the deploy mode (a
// status, kill or attach asks the cluster manager, not a spark-submit
// here): "" master is an errdefs.BadArgument.
func KindOf(master string) (Kind, error) {
	switch ClusterKind(master) {
	case ClusterLocal, ClusterYARN, ClusterConnect:
		return KindLocal, nil
	case ClusterK8s:
		return KindK8s, nil
	case ClusterStandalone, ClusterMesos:
		return KindREST, nil
	}
	if master == "" {
		return "", ErrNoMaster
	}
	return "", errdefs.Optionf(errdefs.BadArgument, "submit.Route.master", "master %q: not a master Spark takes", master)
}

// Route returns the backend that runs sub: KindLocal when its driver runs
// under spark-submit on this machine and nothing of the cluster manager is
// followed (RunsHere), else the cluster manager's backend (k8s:// in every
// deploy mode: its client mode runs spark-submit through submit/local's
// runner and reports as the K8s backend). The master and deploy mode are Spark's (flag, conf,
// $MASTER, $DEPLOY_MODE); no master is spark-submit's default, local[*].
func Route(sub *Submission) (Kind, error) {
	if RunsHere(sub) {
		return KindLocal, nil
	}
	return KindOf(sub.Master())
}

// RunsHere reports whether the driver of sub runs under spark-submit on
// this machine, so that spark-submit's own exit code is the application's:
// local masters (local, local[N], local[*], local-cluster[…]), YARN (client
// mode, and cluster mode, where spark-submit waits for the application and
// fails with it), Spark Connect, and client mode on spark:// and
// mesos://. K8s client mode stays with the K8s backend (Route).
func RunsHere(sub *Submission) bool {
	switch ClusterKind(sub.Master()) {
	case ClusterLocal, ClusterYARN, ClusterConnect:
		return true
	case ClusterStandalone, ClusterMesos:
		return sub.DeployMode() != "cluster"
	}
	return false
}

// Timings are the wall-clock milestones of the run.
type Timings struct {
	Started        time.Time  `json:"started"`
	Submitted      *time.Time `json:"submitted,omitempty"`
	Running        *time.Time `json:"running,omitempty"`
	Finished       time.Time  `json:"finished"`
	SubmitSeconds  float64    `json:"submitSeconds"`
	PendingSeconds float64    `json:"pendingSeconds"`
	RunSeconds     float64    `json:"runSeconds"`
	TotalSeconds   float64    `json:"totalSeconds"`
}

// Finish sets Finished to now and the durations from the milestones (in
// seconds, to the millisecond): without Submitted, all of the run was the
// submission.
func (t *Timings) Finish(now time.Time) {
	secs := func(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }
	t.Finished = now
	t.TotalSeconds = secs(now.Sub(t.Started))
	if t.Submitted == nil {
		t.SubmitSeconds = t.TotalSeconds
		return
	}
	t.SubmitSeconds = secs(t.Submitted.Sub(t.Started))
	end := now
	if t.Running != nil {
		end = *t.Running
		t.RunSeconds = secs(now.Sub(*t.Running))
	}
	t.PendingSeconds = secs(end.Sub(*t.Submitted))
}

// Sleep waits d or until ctx is done (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DriverExit turns the driver's own exit code into the run's error: nil for
// 0, errdefs.Driver for a code that is passed through unchanged (any code a
// shell can carry, 1–255, that is not one of prebake's own: PassesThrough),
// else errdefs.DriverError (kind errdefs.DriverFailed, source driver), so
// that each of prebake's codes keeps its one meaning.
func DriverExit(code int, msg string) error {
	switch {
	case code == 0:
		return nil
	case PassesThrough(code):
		return errdefs.Driver(code, fmt.Errorf("%s", msg))
	}
	return errdefs.DriverError(fmt.Errorf("%s (exit code %d is one of prebake's own codes, reported as driver failed)", msg, code))
}

// prebakeCodes are the exit codes prebake itself gives (the README's
// exit-code table; cmd's tests check this set against internal/exitcode).
var prebakeCodes = map[int]bool{64: true, 65: true, 66: true, 69: true, 70: true, 73: true, 75: true, 76: true, 77: true, 78: true, 79: true, 80: true}

// PassesThrough reports whether a driver's exit code is passed through
// unchanged: 1–255 except prebake's own codes (64–66, 69, 70, 73,
// 75–80).
func PassesThrough(code int) bool {
	return code >= 1 && code <= 255 && !prebakeCodes[code]
}

// OneLine is the first line of s, trimmed, with " ..." when more follow
// (a pod's or container's message in a one-line report).
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

// OrNA is s, or "N/A" when it is empty, as Spark prints a missing value
// (LoggingPodStatusWatcher's "node name: N/A").
func OrNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}
