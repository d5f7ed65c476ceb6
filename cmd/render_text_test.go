package cmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s"
	"github.com/prebake/prebake/submit/rest"
)

func intp(n int) *int { return &n }

// TestTextForms: the text forms of the backends' results, as the CLI
// prints them without -o json.
func TestTextForms(t *testing.T) {
	timings := submit.Timings{TotalSeconds: 61.26}
	oom := &k8s.Result{
		SubmissionID: "ns:app-driver", Phase: "Failed", Reason: "OOMKilled",
		Containers: []k8s.ContainerResult{
			{Name: "init", Init: true, State: "terminated", ExitCode: intp(0)},
			{Name: "spark-kubernetes-driver", Driver: true, State: "terminated", ExitCode: intp(137), Reason: "OOMKilled",
				Explanation: "the container exceeded its memory limit", Message: "killed\nmore"},
			{Name: "sidecar", State: "terminated", ExitCode: intp(0), Reason: "Completed"},
		},
		ExecutorFailures: []k8s.ExecutorFailure{{Pod: "app-exec-1", ExecutorID: "1", ExitCode: intp(52), Explanation: "JVM OOM"}},
		LogTail:          []string{"line a", "line b"},
		Timings:          timings,
	}
	ok := &k8s.Result{SubmissionID: "ns:app-driver", Phase: "Succeeded", Reason: "Completed",
		Containers: []k8s.ContainerResult{{Name: "spark-kubernetes-driver", State: "terminated", ExitCode: intp(0)}},
		LogTail:    []string{"not shown"}, Timings: timings}
	for _, tt := range []struct {
		name         string
		write        func(stdout, stderr *bytes.Buffer)
		stdout, errs string
	}{
		{"k8s failed", func(o, e *bytes.Buffer) { writeK8sText(k8sOutcome{ExitCode: 137, Source: "driver", Result: oom}, o, e) },
			"ns:app-driver Failed exit=137 source=driver reason=OOMKilled total=1m1.3s\n",
			"Container final statuses:\n\n" +
				"\t container name: init (init)\n\t container state: terminated\n\t exit code: 0\n\n" +
				"\t container name: sidecar\n\t container state: terminated\n\t exit code: 0\n\t termination reason: Completed\n\n" +
				"\t container name: spark-kubernetes-driver\n\t container state: terminated\n\t exit code: 137\n" +
				"\t termination reason: OOMKilled\n\t explanation: the container exceeded its memory limit\n\t message: killed ...\n" +
				"Executor 1 (app-exec-1) failed with exit code 52: JVM OOM\n" +
				"Last 2 lines of the driver log:\n  | line a\n  | line b\n"},
		{"k8s succeeded", func(o, e *bytes.Buffer) { writeK8sText(k8sOutcome{Source: "driver", Result: ok}, o, e) },
			"ns:app-driver Succeeded exit=0 source=driver reason=Completed total=1m1.3s\n",
			"Container final statuses:\n\n\t container name: spark-kubernetes-driver\n\t container state: terminated\n\t exit code: 0\n"},
		{"k8s not submitted", func(o, e *bytes.Buffer) {
			writeK8sText(k8sOutcome{ExitCode: 69, Source: "prebake", Result: &k8s.Result{Phase: "Submitting"}}, o, e)
		}, "(not submitted) Submitting exit=69 source=prebake total=0s\n", ""},
		// Review 3, finding 17: a native usage error named a pod it never created.
		{"k8s refused before creating", func(o, e *bytes.Buffer) {
			writeK8sText(k8sOutcome{ExitCode: 64, Source: "prebake", Result: &k8s.Result{SubmissionID: "default:app-driver", Phase: "Submitting"}}, o, e)
		}, "(not submitted) Submitting exit=64 source=prebake total=0s\n", ""},
		{"rest", func(o, e *bytes.Buffer) {
			writeRESTText(restOutcome{ExitCode: 80, Source: "driver", Result: &rest.Result{SubmissionID: "driver-1", State: "FAILED", TaskState: "FAILED", Reason: "FAILED", Timings: timings}}, o)
		}, "driver-1 FAILED exit=80 source=driver task=FAILED reason=FAILED total=1m1.3s\n", ""},
		{"rest no state", func(o, e *bytes.Buffer) {
			writeRESTText(restOutcome{ExitCode: 69, Source: "prebake", Result: &rest.Result{}}, o)
		}, "(not submitted) - exit=69 source=prebake total=0s\n", ""},
		{"k8s status", func(o, e *bytes.Buffer) {
			writeK8sStatusText(o, []k8s.DriverStatus{{Namespace: "ns", Pod: "p", Phase: "Running",
				Labels: map[string]string{"b": "2", "a": "1"}, Created: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
				Containers: []k8s.ContainerResult{{Name: "c", State: "terminated", ExitCode: intp(1), Reason: "Error"}}}})
		}, "Application status (driver):\n\t pod name: p\n\t namespace: ns\n\t labels: a -> 1, b -> 2\n" +
			"\t creation time: 2026-12-01T10:00:00Z\n\t node name: N/A\n\t phase: Running\n" +
			"\t container name: c\n\t container state: terminated\n\t exit code: 1\n\t termination reason: Error\n", ""},
		{"k8s status none", func(o, e *bytes.Buffer) { writeK8sStatusText(o, nil) }, "Application not found.\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			tt.write(&stdout, &stderr)
			if d := cmp.Diff(tt.stdout, stdout.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.errs, stderr.String()); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
		})
	}
}

// TestK8sSummaryState: the K8s summary line's state when the pod's phase
// lags the driver container's end (review ux-4, LOW 3): a final line saying
// "Running" read as "still running" in an Airflow task log.
func TestK8sSummaryState(t *testing.T) {
	timings := submit.Timings{TotalSeconds: 80}
	driver := func(state string, code *int, reason string) []k8s.ContainerResult {
		return []k8s.ContainerResult{
			{Name: "init", Init: true, State: "terminated", ExitCode: intp(0)},
			{Name: "sidecar", State: "running"},
			{Name: "spark-kubernetes-driver", Driver: true, State: state, ExitCode: code, Reason: reason},
		}
	}
	for _, tt := range []struct {
		name   string
		phase  string
		cs     []k8s.ContainerResult
		exit   int
		reason string
		want   string
	}{
		{"running, driver ended 0", "Running", driver("terminated", intp(0), "Completed"), 0, "Completed",
			"ns:app-driver Succeeded exit=0 source=driver pod=Running reason=Completed total=1m20s\n"},
		{"running, driver ended 3", "Running", driver("terminated", intp(3), "Error"), 3, "Error",
			"ns:app-driver Failed exit=3 source=driver pod=Running reason=Error total=1m20s\n"},
		{"pending, driver ended 1", "Pending", driver("terminated", intp(1), "Error"), 1, "Error",
			"ns:app-driver Failed exit=1 source=driver pod=Pending reason=Error total=1m20s\n"},
		{"succeeded", "Succeeded", driver("terminated", intp(0), "Completed"), 0, "Completed",
			"ns:app-driver Succeeded exit=0 source=driver reason=Completed total=1m20s\n"},
		{"failed", "Failed", driver("terminated", intp(3), "Error"), 3, "Error",
			"ns:app-driver Failed exit=3 source=driver reason=Error total=1m20s\n"},
		// A driver still running (hung, timed out) is still running: the pod's phase stays.
		{"running, hung", "Running", driver("running", nil, ""), 75, k8s.ReasonHung,
			"ns:app-driver Running exit=75 source=prebake reason=DriverHung total=1m20s\n"},
		// Only the driver container counts: an ended sidecar does not.
		{"running, other container ended", "Running", []k8s.ContainerResult{
			{Name: "sidecar", State: "terminated", ExitCode: intp(0)},
			{Name: "spark-kubernetes-driver", Driver: true, State: "running"}}, 75, "Timeout",
			"ns:app-driver Running exit=75 source=prebake reason=Timeout total=1m20s\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &k8s.Result{SubmissionID: "ns:app-driver", Phase: tt.phase, Reason: tt.reason, Containers: tt.cs, Timings: timings}
			source := "driver"
			if tt.exit == 75 {
				source = "prebake"
			}
			var stdout, stderr bytes.Buffer
			writeK8sText(k8sOutcome{ExitCode: tt.exit, Source: source, Result: r}, &stdout, &stderr)
			if d := cmp.Diff(tt.want, stdout.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			if r.Phase != tt.phase {
				t.Errorf("the result's phase changed: %q, want %q (JSON keeps the API server's phase)", r.Phase, tt.phase)
			}
		})
	}
}
