package k8s

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// Result is the outcome of a K8s submission. Its JSON form is one object
// (keys stable; empty ones omitted):
//
//	{
//	  "backend": "k8s",
//	  "submissionId": "ns:pod",        // as spark-submit prints it
//	  "namespace": "ns",
//	  "pod": "my-app-1a2b3c4d5e6f-driver",
//	  "phase": "Succeeded",            // last pod phase seen: Pending|Running|Succeeded|Failed|Unknown,
//	                                   // or "Deleted" (pod gone), "NotFound" (never seen), "Submitting",
//	                                   // "NotSubmitted" (refused before any object was created: a usage
//	                                   // error; no submissionId, no pod)
//	  "exitCode": 0,                   // the CLI's: prebake's own exit code for this run
//	  "driverExitCode": 0,             // the driver container's exitCode, or the one SparkContext
//	                                   // reported for a hung driver (absent when unknown)
//	  "source": "driver",              // the CLI's: where exitCode comes from, "driver" | "prebake"
//	  "reason": "Completed",           // container/pod reason (Completed, Error, OOMKilled, Evicted,
//	                                   // ImagePullBackOff, Unschedulable, ...) or prebake's:
//	                                   // DriverHung, PendingTimeout, Timeout, Cancelled, PodDeleted,
//	                                   // PodNotFound, Unauthorized, APIUnavailable, SubmitFailed
//	  "message": "...",                // one human-readable line
//	  "exitException": "...",          // the driver's failure as Spark 4.1+ annotates its pod
//	                                   // (spark.exit-exception, with spark.kubernetes.driver.
//	                                   // annotateExitException=true), redacted, at most 4 KiB
//	  "terminationMessage": "...",     // the driver container's termination message (what the
//	                                   // driver wrote to its terminationMessagePath), redacted
//	                                   // and at most 4 KiB; so is every text the driver, the kubelet or
//	                                   // the operator wrote (message, reason, containers[].message,
//	                                   // logTail): a cut one ends "… [N bytes, cut to K]"
//	  "containers": [{"name": "spark-kubernetes-driver", "state": "terminated",
//	                  "exitCode": 137, "reason": "OOMKilled", "explanation": "..."}],
//	  "logTail": ["..."],              // last driver log lines (WithLogTail), on failure
//	  "executorFailures": [{"pod": "...-exec-3", "executorId": "3", "exitCode": 52,
//	                        "reason": "Error", "explanation": "JVM OOM"}],  // seen during the run
//	  "sparkSubmitExitCode": 1,        // only when spark-submit itself failed
//	  "timings": {"started": "RFC3339", "submitted": "...", "running": "...", "finished": "...",
//	              "submitSeconds": 1.2, "pendingSeconds": 3.4, "runSeconds": 56.7, "totalSeconds": 61.3}
//	}
type Result struct {
	Backend             string            `json:"backend"`
	SubmissionID        string            `json:"submissionId,omitempty"`
	Namespace           string            `json:"namespace,omitempty"`
	Pod                 string            `json:"pod,omitempty"`
	Phase               string            `json:"phase"`
	DriverExitCode      *int              `json:"driverExitCode,omitempty"`
	Reason              string            `json:"reason,omitempty"`
	Message             string            `json:"message,omitempty"`
	ExitException       string            `json:"exitException,omitempty"`
	TerminationMessage  string            `json:"terminationMessage,omitempty"`
	Containers          []ContainerResult `json:"containers,omitempty"`
	LogTail             []string          `json:"logTail,omitempty"`
	ExecutorFailures    []ExecutorFailure `json:"executorFailures,omitempty"`
	SparkSubmitExitCode *int              `json:"sparkSubmitExitCode,omitempty"`
	Timings             Timings           `json:"timings"`

	err error // what failed (errdefs kinds), nil on success
}

// ContainerResult is one container's last state in the driver pod.
type ContainerResult struct {
	Name        string `json:"name"`
	Init        bool   `json:"init,omitempty"`
	Driver      bool   `json:"driver,omitempty"` // the driver container of a run's driver pod
	State       string `json:"state"`            // waiting|running|terminated|unknown
	ExitCode    *int   `json:"exitCode,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

// ExecutorFailure is an executor pod (spark-role=executor of the same
// application) whose container ended with a non-zero code during the run.
type ExecutorFailure struct {
	Pod         string `json:"pod"`
	ExecutorID  string `json:"executorId,omitempty"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

// Timings are submit.Timings.
type Timings = submit.Timings

// Err is the error for the result: nil on success, else the error; its
// errdefs kind says what failed (errdefs.Driver carries the driver's code).
func (r *Result) Err() error { return r.err }

// finish records err (nil: success) and sets the timings.
func (r *Result) finish(now time.Time, err error) {
	r.err = err
	if err != nil && r.Message == "" {
		r.Message = err.Error()
	}
	r.sanitize()
	r.Timings.Finish(now)
}

// sanitize redacts and bounds (redact.Message) every text of r that a
// driver, an operator or the API server wrote, once, before r reaches any
// output (text, JSON, a result file): each container's message, the
// operator's errorMessage, the exit exception, the log tail.
func (r *Result) sanitize() {
	for _, p := range []*string{&r.Reason, &r.Message, &r.ExitException, &r.TerminationMessage} {
		*p = redact.Message(*p)
	}
	sanitizeContainers(r.Containers)
	for i := range r.ExecutorFailures {
		f := &r.ExecutorFailures[i]
		f.Reason, f.Explanation = redact.Message(f.Reason), redact.Message(f.Explanation)
	}
	for i, l := range r.LogTail {
		r.LogTail[i] = redact.Message(l)
	}
}

// sanitizeContainers redacts and bounds the texts the kubelet or the
// container wrote (reason, message).
func sanitizeContainers(cs []ContainerResult) {
	for i := range cs {
		cs[i].Reason, cs[i].Message = redact.Message(cs[i].Reason), redact.Message(cs[i].Message)
	}
}

// explainExit says what a container exit code usually means for Spark.
func explainExit(code int, reason string) string {
	var s []string
	if reason == "OOMKilled" {
		s = append(s, "the container exceeded its memory limit (raise spark.driver.memoryOverhead or the limit)")
	}
	switch code {
	case 1:
		s = append(s, "uncaught exception in the application's main (see the driver log)")
	case 10, 50:
		s = append(s, "uncaught exception")
	case 52:
		s = append(s, "JVM OutOfMemoryError")
	case 53:
		s = append(s, "DiskStore could not create a temp directory")
	case 101:
		s = append(s, "main class not found (check --class and the application jar)")
	case 124:
		s = append(s, "driver timed out")
	case 126:
		s = append(s, "command not executable")
	case 127:
		s = append(s, "command not found in the image")
	case 137:
		if reason != "OOMKilled" {
			s = append(s, "SIGKILL: killed after the termination grace period, or by the kernel OOM killer")
		}
	case 139:
		s = append(s, "SIGSEGV")
	case 143:
		s = append(s, "SIGTERM: the pod was deleted, evicted or preempted")
	case 255:
		s = append(s, "exit(-1)")
	}
	return strings.Join(s, "; ")
}

// explainExecutorExit is ExecutorPodsLifecycleManager.describeExitCode.
func explainExecutorExit(code int, reason string) string {
	s := map[int]string{
		1: "generic, look at the executor log", 10: "uncaught exception", 50: "uncaught exception",
		52: "JVM OOM", 53: "DiskStore failed to create a temp dir", 126: "not executable (permissions or architecture)",
		137: "SIGKILL, possible container OOM", 139: "SIGSEGV", 143: "SIGTERM: deleted, evicted or preempted", 255: "exit(-1)",
	}[code]
	if s == "" {
		s = "unexpected"
	}
	if reason == "OOMKilled" {
		s = "OOMKilled: the container exceeded its memory limit (spark.executor.memoryOverhead)"
	}
	return s
}

// containerResults summarises a pod's init and app container statuses.
func containerResults(pod *corev1.Pod) []ContainerResult {
	var out []ContainerResult
	add := func(st corev1.ContainerStatus, init bool) {
		c := ContainerResult{Name: st.Name, Init: init, State: "unknown"}
		switch s := st.State; {
		case s.Terminated != nil:
			code := int(s.Terminated.ExitCode)
			c.State, c.ExitCode, c.Reason, c.Message = "terminated", &code, s.Terminated.Reason, s.Terminated.Message
			c.Explanation = explainExit(code, s.Terminated.Reason)
		case s.Running != nil:
			c.State = "running"
		case s.Waiting != nil:
			c.State, c.Reason, c.Message = "waiting", s.Waiting.Reason, s.Waiting.Message
		}
		out = append(out, c)
	}
	for _, st := range pod.Status.InitContainerStatuses {
		add(st, true)
	}
	for _, st := range pod.Status.ContainerStatuses {
		add(st, false)
	}
	sanitizeContainers(out)
	return out
}

// ExitExceptionAnnotation is the driver pod annotation in which Spark 4.1+
// records the exception the driver ended with (SPARK-53335; written by the
// driver when spark.kubernetes.driver.annotateExitException is true, never
// by the submission client).
const ExitExceptionAnnotation = "spark.exit-exception"

// MaxDriverEnd bounds each of the driver's end texts kept in a Result
// (Kubernetes itself keeps at most 4096 bytes of a termination message).
const MaxDriverEnd = 4096

// driverEnd is what the driver wrote about its end: the spark.exit-exception
// annotation of its pod and the termination message of its container
// (Spark lines before 4.1 write neither; a container's message is empty
// unless the program wrote its terminationMessagePath, or FallbackToLogsOnError
// took the log's tail). Both are redacted and bounded by MaxDriverEnd.
func driverEnd(pod *corev1.Pod, cs *corev1.ContainerStatus) (exitException, termination string) {
	if pod != nil {
		exitException = boundText(pod.Annotations[ExitExceptionAnnotation])
	}
	if cs != nil && cs.State.Terminated != nil {
		termination = boundText(cs.State.Terminated.Message)
	}
	return exitException, termination
}

// setDriverEnd records the driver's end texts in r.
func (r *Result) setDriverEnd(pod *corev1.Pod, cs *corev1.ContainerStatus) {
	r.ExitException, r.TerminationMessage = driverEnd(pod, cs)
}

// driverEndSummary is the first line of the driver's own account of its
// failure (the exit exception, else the termination message), for the
// one-line message; "" when the driver wrote none.
func (r *Result) driverEndSummary() string {
	for _, s := range []string{r.ExitException, r.TerminationMessage} {
		if first, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); first != "" {
			return strings.TrimSpace(first)
		}
	}
	return ""
}

// boundText redacts s and keeps at most MaxDriverEnd bytes of it
// (redact.Message).
func boundText(s string) string { return redact.MessageN(s, MaxDriverEnd) }
