package cmd

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s"
)

// The text forms of the backends' results (what the CLI prints without
// -o json); the backends only return the values.

// writeSummary prints the one-line summary of a run on stdout:
// "<id> <state> exit=N source=S[ task=T][ pod=P][ reason=R] total=D"
// (task is a REST driver's task state, pod a K8s pod phase that lags the
// driver container's end; see summaryState).
func writeSummary(w io.Writer, id, state string, exit int, source, task, pod, reason string, timings submit.Timings) {
	if id == "" {
		id = "(not submitted)"
	}
	fmt.Fprintf(w, "%s %s exit=%d source=%s", id, state, exit, source)
	if task != "" {
		fmt.Fprintf(w, " task=%s", task)
	}
	if pod != "" {
		fmt.Fprintf(w, " pod=%s", pod)
	}
	if reason != "" {
		fmt.Fprintf(w, " reason=%s", reason)
	}
	fmt.Fprintf(w, " total=%s\n", time.Duration(timings.TotalSeconds*float64(time.Second)).Round(100*time.Millisecond))
}

// writeK8sText prints a K8s result for humans (what `prebake submit` prints
// without -o json): the summary on stdout and, when the run failed, the
// container statuses, executor failures and the log tail on stderr.
func writeK8sText(o k8sOutcome, stdout, stderr io.Writer) {
	r := o.Result
	// The final statuses come on every run, success included, in the shape of
	// Spark's LoggingPodStatusWatcher: callers that read spark-submit's output
	// depend on it (Airflow's SparkSubmitHook fails a K8s cluster-mode task
	// unless a line says "exit code: N", and it reads the last such line: the
	// driver container comes last).
	if len(r.Containers) > 0 {
		var b strings.Builder
		b.WriteString("Container final statuses:\n")
		cs := slices.Clone(r.Containers)
		slices.SortStableFunc(cs, func(a, b k8s.ContainerResult) int {
			return cmp.Compare(btoi(a.Driver), btoi(b.Driver))
		})
		for _, c := range cs {
			b.WriteString("\n")
			containerBundle(&b, c, true)
		}
		io.WriteString(stderr, b.String())
	}
	if o.ExitCode != 0 || r.Reason == k8s.ReasonHung {
		for _, x := range r.ExecutorFailures {
			fmt.Fprintf(stderr, "Executor %s (%s) failed", x.ExecutorID, x.Pod)
			if x.ExitCode != nil {
				fmt.Fprintf(stderr, " with exit code %d", *x.ExitCode)
			}
			fmt.Fprintf(stderr, ": %s\n", x.Explanation)
		}
		writeLogTail(stderr, r.LogTail)
	}
	id := r.SubmissionID
	if (r.Phase == "Submitting" || r.Phase == k8s.PhaseNotSubmitted) && o.ExitCode == exitcode.Usage {
		id = "" // refused before any object was created: no pod to name
	}
	state, pod := summaryState(r)
	writeSummary(stdout, id, state, o.ExitCode, o.Source, "", pod, r.Reason, r.Timings)
}

// summaryState is the state the K8s summary line names, and the extra
// "pod=<phase>" it adds. The result's phase is the API server's at the
// moment the driver container ended, and a pod often still reads Running
// (or Pending, Unknown) for a beat after that: a final log line saying
// "Running" reads as "still running" (review ux-4, LOW 3). When the driver
// container has terminated, the line names the outcome its exit code says
// (Succeeded for 0, Failed otherwise, as the pod will end) and keeps the
// lagging phase as pod=<phase>. A driver container that has not
// terminated (hung, timed out, interrupted) keeps the pod's phase: that
// pod is still running. The JSON result's phase is not touched.
func summaryState(r *k8s.Result) (state, pod string) {
	switch r.Phase {
	case "Pending", "Running", "Unknown":
	default:
		return r.Phase, ""
	}
	for _, c := range r.Containers {
		if !c.Driver || c.State != "terminated" || c.ExitCode == nil {
			continue
		}
		if *c.ExitCode == 0 {
			return "Succeeded", r.Phase
		}
		return "Failed", r.Phase
	}
	return r.Phase, ""
}

// writeRESTText prints a REST result's one-line summary to w (stdout), what `prebake
// submit` prints without -o json.
func writeRESTText(o restOutcome, w io.Writer) {
	r := o.Result
	state := r.State
	if state == "" {
		state = "-"
	}
	writeSummary(w, r.SubmissionID, state, o.ExitCode, o.Source, r.TaskState, "", r.Reason, r.Timings)
}

// writeK8sStatusText prints k8s.Status's result as spark-submit --status does.
func writeK8sStatusText(w io.Writer, ss []k8s.DriverStatus) {
	for _, s := range ss {
		fmt.Fprintf(w, "Application status (driver):\n%s", statusBundle(s))
	}
	if len(ss) == 0 {
		fmt.Fprintln(w, "Application not found.")
	}
}

// statusBundle formats a pod like Spark's LoggingPodStatusWatcher.
func statusBundle(s k8s.DriverStatus) string {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "\t %s: %s\n", k, v) }
	kv("pod name", s.Pod)
	kv("namespace", s.Namespace)
	var labels []string
	for k, v := range s.Labels {
		labels = append(labels, k+" -> "+v)
	}
	sort.Strings(labels)
	kv("labels", strings.Join(labels, ", "))
	kv("creation time", s.Created.UTC().Format(time.RFC3339))
	kv("node name", submit.OrNA(s.Node))
	kv("phase", s.Phase)
	if s.Reason != "" {
		kv("reason", s.Reason)
	}
	if s.Deleting {
		kv("deletion", "in progress")
	}
	for _, c := range s.Containers {
		containerBundle(&b, c, false)
	}
	return b.String()
}

// containerBundle writes one container's lines as Spark's
// LoggingPodStatusWatcher does ("\t exit code: N"); final (the end of a
// run) marks init containers and adds the termination message on one line.
func containerBundle(b *strings.Builder, c k8s.ContainerResult, final bool) {
	kv := func(k, v string) { fmt.Fprintf(b, "\t %s: %s\n", k, v) }
	name := c.Name
	if final && c.Init {
		name += " (init)"
	}
	kv("container name", name)
	kv("container state", c.State)
	if c.ExitCode != nil {
		kv("exit code", fmt.Sprint(*c.ExitCode))
	}
	if c.Reason != "" && c.State == "terminated" {
		kv("termination reason", c.Reason)
	} else if c.Reason != "" {
		kv("reason", c.Reason)
	}
	if c.Explanation != "" {
		kv("explanation", c.Explanation)
	}
	if final && c.Message != "" {
		kv("message", submit.OneLine(c.Message))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writeLogTail prints a failed driver's last log lines on stderr.
func writeLogTail(stderr io.Writer, tail []string) {
	if len(tail) == 0 {
		return
	}
	fmt.Fprintf(stderr, "Last %d lines of the driver log:\n", len(tail))
	for _, l := range tail {
		fmt.Fprintf(stderr, "  | %s\n", l)
	}
}
