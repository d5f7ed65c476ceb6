package submit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
)

// Backend runs a prepared (rewritten) spark-submit command line on one
// kind of cluster manager and follows the driver to its end. The K8s
// backend lives in submit/k8s (the only package that imports client-go),
// the standalone/Mesos REST backend in submit/rest; a backend returns its
// Outcome and prints no result (cmd renders it). The submission is the
// (rewritten) command line loaded once with LoadSubmission: every backend
// reads its master, deploy mode and conf from it, with Spark's precedence.
type Backend interface {
	Submit(ctx context.Context, sub *Submission) (Outcome, error)
}

// Outcome is what a backend reports at the end of a run.
type Outcome interface {
	// Err is nil when the driver succeeded, else the error; its kind
	// (package errdefs) says what failed, and errdefs.Driver carries the
	// driver's own exit code.
	Err() error
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
var prebakeCodes = map[int]bool{64: true, 65: true, 66: true, 69: true, 70: true, 73: true, 75: true, 77: true, 78: true, 79: true, 80: true}

// PassesThrough reports whether a driver's exit code is passed through
// unchanged: 1–255 except prebake's own codes (64–66, 69, 70, 73, 75,
// 77–80).
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
