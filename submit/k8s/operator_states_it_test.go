package k8s

import (
	"context"
	"strings"
	"testing"
	"time"

	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
)

// TestOperatorStatesIT: `--via operator` against the real kube-apiserver,
// the test playing the operator with the states and messages
// spark-operator v2.3.0 writes, where the driver pod is gone (deleted by
// hand or by a TTL) or never was: a FAILED application's exit code comes
// from its errorMessage; SUBMISSION_FAILED, and FAILED with no exit code,
// are 80 with the operator's message.
func TestOperatorStatesIT(t *testing.T) {
	e := newITEnv(t)
	apps := e.c.InstallSparkOperatorCRD(t)
	for _, tc := range []struct {
		ns     string
		states []string
		msg    string
		want   itWant
		code   *int
	}{
		{"op-st-exit", []string{"SUBMITTED", "RUNNING", "FAILING", "FAILED"}, "driver container failed with ExitCode: 7, Reason: Error",
			itWant{endExit(7), "FAILED", "FAILED"}, ptr(7)},
		{"op-st-subfail", []string{"SUBMISSION_FAILED"}, "failed to run spark-submit: exit status 1",
			itWant{endDriverFailed, "SUBMISSION_FAILED", "SUBMISSION_FAILED"}, nil},
		{"op-st-nopod", []string{"SUBMITTED", "FAILED"}, "driver pod not found",
			itWant{endDriverFailed, "FAILED", "FAILED"}, nil},
		{"op-st-ok", []string{"SUBMITTED", "RUNNING", "SUCCEEDING", "COMPLETED"}, "",
			itWant{endOK, "Completed", "COMPLETED"}, ptr(0)},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			t.Parallel()
			e.c.EnsureNamespace(t, tc.ns)
			done := make(chan struct{})
			go func() { // the test "operator": states only, no driver pod
				defer close(done)
				ctx := context.Background()
				app := k8scluster.WaitSparkApp(ctx, t, apps, tc.ns)
				if app == nil {
					return
				}
				for _, state := range tc.states {
					pod, msg := "", ""
					if state != "SUBMITTED" && state != "SUBMISSION_FAILED" {
						pod = app.GetName() + "-driver"
					}
					if state == "FAILED" || state == "SUBMISSION_FAILED" {
						msg = tc.msg
					}
					if !k8scluster.SetAppStatus(ctx, t, apps, tc.ns, app.GetName(), state, pod, msg) {
						return
					}
					time.Sleep(500 * time.Millisecond)
				}
			}()
			r := e.submit(t, itRun{ns: tc.ns, opts: func(o *options) { o.via = "operator"; o.sparkSubmit = "" }})
			<-done
			checkResult(t, r, tc.want)
			var got *int
			if r.res != nil {
				got = r.res.DriverExitCode
			}
			if (got == nil) != (tc.code == nil) || (got != nil && *got != *tc.code) {
				t.Errorf("driverExitCode %v, want %v", got, tc.code)
			}
			if tc.msg != "" && (r.res == nil || !strings.Contains(r.res.Message, tc.msg)) {
				t.Errorf("message %q lacks the operator's %q", r.res.Message, tc.msg)
			}
		})
	}
}
