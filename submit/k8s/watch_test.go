package k8s

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
)

const driverC = "spark-kubernetes-driver"

// step is one answer to a Get of the driver pod.
type step struct {
	pod *corev1.Pod
	err error
}

func podIn(phase corev1.PodPhase, statuses ...corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Namespace: "ns", Labels: map[string]string{"spark-role": "driver"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: driverC}, {Name: "sidecar"}}},
		Status:     corev1.PodStatus{Phase: phase, ContainerStatuses: statuses},
	}
	return p
}

func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func waiting(name, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "msg for " + reason}}}
}

func terminated(name string, code int32, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}
}

var (
	podGR      = schema.GroupResource{Resource: "pods"}
	errGone    = apierrors.NewNotFound(podGR, "app-driver")
	err401     = apierrors.NewUnauthorized("token expired")
	err503     = apierrors.NewServiceUnavailable("etcd leader changed")
	errNet     = errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer")
	logsWithTS = func(lines ...string) []byte {
		var b strings.Builder
		base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		for i, l := range lines {
			fmt.Fprintf(&b, "%s %s\n", base.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), l)
		}
		return []byte(b.String())
	}
)

// fakeLogs serves one fixed log and records the queries.
type fakeLogs struct {
	mu      sync.Mutex
	data    []byte
	queries []logQuery
}

func (f *fakeLogs) ContainerLog(_ context.Context, _, _, _ string, q logQuery) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	if q.Tail > 0 && !q.Timestamps {
		return []byte(strings.Join(lastLines(stripTS(f.data), int(q.Tail)), "\n") + "\n"), nil
	}
	return f.data, nil
}

func stripTS(b []byte) []byte {
	var out []string
	for _, l := range lastLines(b, 1<<20) {
		_, line, _ := splitTimestamp(l)
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n"))
}

type watchCase struct {
	name        string
	steps       []step // the last one repeats
	logs        []byte
	opts        func(*options)
	ctx         func(context.Context) (context.Context, context.CancelFunc)
	want        runEnd
	wantReason  string
	wantPhase   string
	wantDeleted bool
	wantMsg     string
	wantLogTail bool
	// wantOption is the errdefs.OptionOf of the error: the option that
	// explains it, which the CLI names as a flag.
	wantOption string
}

func TestDriverWatch(t *testing.T) {
	tests := []watchCase{
		{name: "succeeded", steps: []step{
			{pod: podIn(corev1.PodPending, waiting(driverC, "ContainerCreating"))},
			{pod: podIn(corev1.PodRunning, running(driverC))},
			{pod: podIn(corev1.PodSucceeded, terminated(driverC, 0, "Completed"))},
		}, want: endOK, wantReason: "Completed", wantPhase: "Succeeded"},
		{name: "driver failed, sidecar keeps pod running", steps: []step{
			{pod: podIn(corev1.PodRunning, running(driverC), running("sidecar"))},
			{pod: podIn(corev1.PodRunning, terminated(driverC, 1, "Error"), running("sidecar"))},
		}, logs: logsWithTS("a", "Exception in thread main"), want: endExit(1), wantReason: "Error",
			wantPhase: "Running", wantLogTail: true, wantMsg: "uncaught exception"},
		{name: "driver succeeded, sidecar keeps pod running", steps: []step{
			{pod: podIn(corev1.PodRunning, terminated(driverC, 0, "Completed"), running("sidecar"))},
		}, want: endOK, wantReason: "Completed", wantPhase: "Running"},
		{name: "OOMKilled", steps: []step{
			{pod: podIn(corev1.PodFailed, terminated(driverC, 137, "OOMKilled"))},
		}, logs: logsWithTS("x"), want: endExit(137), wantReason: "OOMKilled", wantPhase: "Failed",
			wantLogTail: true, wantMsg: "memory limit"},
		{name: "SIGTERM", steps: []step{
			{pod: podIn(corev1.PodFailed, terminated(driverC, 143, "Error"))},
		}, want: endExit(143), wantReason: "Error", wantPhase: "Failed", wantMsg: "deleted, evicted"},
		{name: "exit code prebake owns", steps: []step{
			{pod: podIn(corev1.PodFailed, terminated(driverC, 70, "Error"))},
		}, want: endDriverFailed, wantReason: "Error", wantPhase: "Failed", wantMsg: "one of prebake's own codes"},
		{name: "evicted, no container status", steps: []step{
			{pod: func() *corev1.Pod { p := podIn(corev1.PodFailed); p.Status.Reason = "Evicted"; return p }()},
		}, want: endDriverFailed, wantReason: "Evicted", wantPhase: "Failed"},
		{name: "not found after grace", steps: []step{{err: errGone}},
			want: endKind(errdefs.NotFound), wantReason: "PodNotFound", wantPhase: "NotFound"},
		{name: "not found first, then runs", steps: []step{
			{err: errGone}, {err: errGone},
			{pod: podIn(corev1.PodSucceeded, terminated(driverC, 0, "Completed"))},
		}, opts: func(o *options) { o.notFoundGrace = time.Minute }, want: endOK, wantReason: "Completed", wantPhase: "Succeeded"},
		{name: "deleted while running", steps: []step{
			{pod: podIn(corev1.PodRunning, running(driverC))}, {err: errGone},
		}, want: endDriverFailed, wantReason: "PodDeleted", wantPhase: "Deleted"},
		{name: "401 after retries", steps: []step{{err: err401}},
			want: endKind(errdefs.Denied), wantReason: "Unauthorized", wantMsg: "refused the submission's credentials (the configured client) 4 times"},
		{name: "one 401 then fine", steps: []step{
			{err: err401}, {pod: podIn(corev1.PodSucceeded, terminated(driverC, 0, "Completed"))},
		}, want: endOK, wantReason: "Completed", wantPhase: "Succeeded"},
		{name: "5xx and network errors are retried", steps: []step{
			{pod: podIn(corev1.PodRunning, running(driverC))}, {err: err503}, {err: errNet}, {err: err503},
			{pod: podIn(corev1.PodFailed, terminated(driverC, 3, "Error"))},
		}, want: endExit(3), wantReason: "Error", wantPhase: "Failed"},
		{name: "API unavailable", steps: []step{{err: err503}},
			opts: func(o *options) { o.apiRetryTimeout = 30 * time.Millisecond },
			want: endKind(errdefs.Unavailable), wantReason: "APIUnavailable"},
		{name: "hung with SparkContext exit code", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			logs: logsWithTS("INFO SparkContext: SparkContext is stopping with exitCode 3.", "INFO SparkContext: Successfully stopped SparkContext"),
			want: endExit(3), wantReason: "DriverHung", wantPhase: "Running", wantDeleted: true, wantLogTail: true, wantMsg: "driver hung after SparkContext stopped"},
		{name: "hung, SparkContext said 0", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			logs: logsWithTS("SparkContext is stopping with exitCode 0 from stop at Main.scala:9"),
			want: endOK, wantReason: "DriverHung", wantPhase: "Running", wantDeleted: true, wantLogTail: true},
		{name: "hung, main threw, SparkContext said 0", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			logs: logsWithTS("INFO SparkContext: SparkContext is stopping with exitCode 0.", "INFO SparkContext: Successfully stopped SparkContext",
				`Exception in thread "main" org.apache.spark.SparkException: Job aborted due to stage failure`),
			want: endKind(errdefs.Hung), wantReason: "DriverHung", wantPhase: "Running", wantDeleted: true, wantLogTail: true,
			wantMsg: `main threw: Exception in thread "main" org.apache.spark.SparkException`},
		{name: "hung, main threw, SparkContext said 3", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			logs: logsWithTS("INFO SparkContext: SparkContext is stopping with exitCode 3.", `Exception in thread "main" java.lang.IllegalStateException: x`),
			want: endExit(3), wantReason: "DriverHung", wantPhase: "Running", wantDeleted: true, wantLogTail: true},
		{name: "hung, no exit code", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			logs: logsWithTS("INFO SparkContext: Successfully stopped SparkContext (Uptime: 5 ms)"),
			want: endKind(errdefs.Hung), wantReason: "DriverHung", wantPhase: "Running", wantDeleted: true, wantLogTail: true},
		{name: "hung, shutdown hook, not killed", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			logs: logsWithTS("INFO ShutdownHookManager: Shutdown hook called"),
			opts: func(o *options) { o.killHungDriver = false },
			want: endKind(errdefs.Hung), wantReason: "DriverHung", wantPhase: "Running", wantLogTail: true, wantMsg: "left running",
			wantOption: "k8s.WithKillHungDriver"},
		{name: "cancelled", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(30*time.Millisecond, cancel)
				return ctx, cancel
			},
			want: endCancelled, wantReason: "Cancelled", wantPhase: "Running", wantDeleted: true},
		{name: "timeout", steps: []step{{pod: podIn(corev1.PodRunning, running(driverC))}},
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(ctx, 30*time.Millisecond, errTimeout)
			},
			want: endKind(errdefs.Timeout), wantReason: "Timeout", wantPhase: "Running", wantDeleted: true, wantOption: "k8s.WithTimeout"},
	}
	for _, reason := range []string{"ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "CrashLoopBackOff"} {
		tests = append(tests, watchCase{name: "stuck " + reason,
			steps: []step{{pod: podIn(corev1.PodPending, waiting(driverC, reason))}},
			want:  endKind(errdefs.Timeout), wantReason: reason, wantPhase: "Pending", wantDeleted: true, wantMsg: "msg for " + reason,
			wantOption: "k8s.WithPendingTimeout"})
	}
	unsched := podIn(corev1.PodPending)
	unsched.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: insufficient memory"}}
	tests = append(tests, watchCase{name: "stuck Unschedulable", steps: []step{{pod: unsched}},
		want: endKind(errdefs.Timeout), wantReason: "Unschedulable", wantPhase: "Pending", wantDeleted: true, wantMsg: "insufficient memory",
		wantOption: "k8s.WithPendingTimeout"})

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runWatchCase(t, tc)
		})
	}
}

func runWatchCase(t *testing.T, tc watchCase) {
	res, cs, stderr, err := runWatch(t, tc)

	type summary struct {
		End                     runEnd
		Reason, Phase           string
		Deleted, HasLogTail     bool
		MessageHasWant, ErrNilT bool
		Option                  string
	}
	deleted := false
	for _, a := range cs.Actions() {
		if a.GetVerb() == "delete" {
			deleted = true
		}
	}
	got := summary{endOf(res.Err()), res.Reason, res.Phase, deleted, len(res.LogTail) > 0,
		strings.Contains(res.Message, tc.wantMsg), (err == nil) == (tc.want == endOK), errdefs.OptionOf(err)}
	want := summary{tc.want, tc.wantReason, tc.wantPhase, tc.wantDeleted, tc.wantLogTail, true, true, tc.wantOption}
	if tc.wantPhase == "" {
		want.Phase = got.Phase // not asserted for errors before any pod was seen
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("result (-want +got):\n%s\nmessage: %s\nstderr:\n%s", d, res.Message, stderr)
	}
	if e, r := endOf(err), endOf(res.Err()); e.Kind != r.Kind || e.Code != r.Code {
		t.Errorf("error %+v != result %+v", e, r)
	}
}

func TestLogFollowerDedup(t *testing.T) {
	var f logFollower
	if q := f.query(); q.Tail != firstFetchTail || !q.Timestamps || !q.Since.IsZero() {
		t.Errorf("first query = %+v", q)
	}
	t0 := time.Date(2026, 11, 29, 10, 0, 5, 100, time.UTC)
	line := func(d time.Duration, s string) string { return t0.Add(d).Format(time.RFC3339Nano) + " " + s + "\n" }
	now := time.Now()
	got := f.feed([]byte(line(0, "a")+line(time.Millisecond, "b")+line(time.Millisecond, "c")), now)
	if d := cmp.Diff([]string{"a", "b", "c"}, got); d != "" {
		t.Errorf("first chunk (-want +got):\n%s", d)
	}
	if q := f.query(); !q.Since.Equal(t0.Truncate(time.Second)) || q.Tail != 0 {
		t.Errorf("next query = %+v, want since %s", q, t0.Truncate(time.Second))
	}
	// sinceTime has second precision: the server sends the same second again.
	got = f.feed([]byte(line(0, "a")+line(time.Millisecond, "b")+line(time.Millisecond, "c")+line(time.Millisecond, "d")+
		line(2*time.Second, "INFO SparkContext: SparkContext is stopping with exitCode 12.")), now)
	if d := cmp.Diff([]string{"d", "INFO SparkContext: SparkContext is stopping with exitCode 12."}, got); d != "" {
		t.Errorf("overlapping chunk (-want +got):\n%s", d)
	}
	if f.exitCode == nil || *f.exitCode != 12 || f.marker == "" || !f.markerAt.Equal(now) {
		t.Errorf("marker %q exit %v at %v", f.marker, f.exitCode, f.markerAt)
	}
	f.feed([]byte(line(3*time.Second, "Successfully stopped SparkContext")), now.Add(time.Minute))
	if !f.markerAt.Equal(now) {
		t.Error("a later marker moved the first one")
	}
}

func TestStopMarkers(t *testing.T) {
	for line, want := range map[string]bool{
		"26/11/29 10:00:00 INFO SparkContext: Successfully stopped SparkContext":                    true,
		"26/11/29 10:00:00 INFO SparkContext: Successfully stopped SparkContext (Uptime: 1234 ms)":  true,
		"INFO SparkContext: Invoking stop() from shutdown hook":                                     true,
		"INFO ShutdownHookManager: Shutdown hook called":                                            true,
		"INFO DiskBlockManager: Shutdown hook called":                                               true,
		"INFO SparkContext: SparkContext is stopping with exitCode 0 from stop at App.scala:12.":    true,
		"INFO SparkContext: Running Spark version 3.5.3":                                            false,
		"INFO SparkContext: Successfully started SparkContext":                                      false,
		"WARN Something: Stopping SparkContext is not a marker without the exact words in the list": false,
	} {
		var f logFollower
		f.scan(line, time.Now())
		if got := f.marker != ""; got != want {
			t.Errorf("%q: marker %v, want %v", line, got, want)
		}
	}
}

func TestTailWriter(t *testing.T) {
	w := &submit.TailWriter{Max: 2}
	fmt.Fprint(w, "one\ntwo\nthr")
	fmt.Fprint(w, "ee\nfour")
	if d := cmp.Diff([]string{"two", "three", "four"}, w.Lines()); d != "" {
		t.Errorf("tail (-want +got):\n%s", d)
	}
}

func TestSparkSubmitFailedCodes(t *testing.T) {
	for out, want := range map[string]errdefs.Kind{
		"KubernetesClientException: Failure executing: POST ... Message: Forbidden": errdefs.Denied,
		"java.net.UnknownHostException: k8s.example":                                errdefs.Unavailable,
		"Error: Missing application resource.":                                      errdefs.BadArgument,
	} {
		err := sparkSubmitFailed("/bin/spark-submit", 1, []string{out})
		if got := errdefs.KindOf(err); got != want || !strings.Contains(err.Error(), "exited with code 1") {
			t.Errorf("%q: kind %v (%v), want %v", out, got, err, want)
		}
	}
}

func TestExecutorFailures(t *testing.T) {
	exec := func(name, app, id string, phase corev1.PodPhase, reason string, st ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"spark-role": "executor", "spark-app-selector": app, "spark-exec-id": id}},
			Status:     corev1.PodStatus{Phase: phase, Reason: reason, ContainerStatuses: st},
		}
	}
	cs := fake.NewClientset(
		exec("app-exec-1", "spark-1", "1", corev1.PodFailed, "", terminated("spark-kubernetes-executor", 52, "Error")),
		exec("app-exec-2", "spark-1", "2", corev1.PodRunning, "", running("spark-kubernetes-executor")),
		exec("app-exec-3", "spark-1", "3", corev1.PodFailed, "Evicted"),
		exec("app-exec-4", "spark-1", "4", corev1.PodFailed, "", terminated("spark-kubernetes-executor", 137, "OOMKilled")),
		exec("other-exec-1", "spark-2", "1", corev1.PodFailed, "", terminated("spark-kubernetes-executor", 1, "Error")),
	)
	driver := podIn(corev1.PodRunning, running(driverC))
	driver.Labels["spark-app-selector"] = "spark-1"
	done := podIn(corev1.PodSucceeded, terminated(driverC, 0, "Completed"))
	done.Labels["spark-app-selector"] = "spark-1"
	n := 0
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		n++
		if n < 3 {
			return true, driver.DeepCopy(), nil
		}
		return true, done.DeepCopy(), nil
	})
	o := &options{pollInterval: time.Millisecond}
	o = mustOptions(t, use(*o))
	w := &driverWatch{client: cs, logs: &fakeLogs{}, ns: "ns", pod: "app-driver", o: o, now: time.Now}
	res := &Result{}
	if err := w.run(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	code := func(c int) *int { return &c }
	want := []ExecutorFailure{
		{Pod: "app-exec-1", ExecutorID: "1", ExitCode: code(52), Reason: "Error", Explanation: "JVM OOM"},
		{Pod: "app-exec-3", ExecutorID: "3", Reason: "Evicted"},
		{Pod: "app-exec-4", ExecutorID: "4", ExitCode: code(137), Reason: "OOMKilled", Explanation: "OOMKilled: the container exceeded its memory limit (spark.executor.memoryOverhead)"},
	}
	if d := cmp.Diff(want, res.ExecutorFailures); d != "" {
		t.Errorf("executor failures (-want +got):\n%s", d)
	}
}

// TestAppExitCode: SparkContext's exit code is the app's, except a 0 after
// main threw (Spark 3.5's SparkSubmit stops the context with 0 either way;
// seen on the real node by TestK8sJourneyHungDriver). The exception line
// the message quotes is bounded.
func TestAppExitCode(t *testing.T) {
	long := `Exception in thread "main" java.lang.IllegalStateException: ` + strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name      string
		lines     []string
		want      string // "none" or the code
		wantThrew string
	}{
		{"no code", []string{"INFO SparkContext: Successfully stopped SparkContext"}, "none", ""},
		{"0, main returned", []string{"INFO SparkContext: SparkContext is stopping with exitCode 0."}, "0", ""},
		{"0, main threw", []string{"INFO SparkContext: SparkContext is stopping with exitCode 0.", `Exception in thread "main" org.apache.spark.SparkException: Job aborted`},
			"none", `Exception in thread "main" org.apache.spark.SparkException: Job aborted`},
		{"main threw first", []string{`Exception in thread "main" E`, "INFO SparkContext: SparkContext is stopping with exitCode 0."}, "none", `Exception in thread "main" E`},
		{"3, main threw", []string{"INFO SparkContext: SparkContext is stopping with exitCode 3.", `Exception in thread "main" E`}, "3", `Exception in thread "main" E`},
		{"another thread threw", []string{"INFO SparkContext: SparkContext is stopping with exitCode 0.", `Exception in thread "worker-1" E`}, "0", ""},
		{"a megabyte line", []string{"INFO SparkContext: SparkContext is stopping with exitCode 0.", long}, "none", long[:maxMainThrew] + " ..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f logFollower
			for _, l := range tc.lines {
				f.scan(l, time.Now())
			}
			got := "none"
			if c := f.appExitCode(); c != nil {
				got = strconv.Itoa(*c)
			}
			if diff := cmp.Diff([]string{tc.want, tc.wantThrew}, []string{got, f.mainThrew}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// runWatch runs a driverWatch over tc's pod answers: the result, the fake
// clientset (its actions), what was written to stderr and the error.
func runWatch(t *testing.T, tc watchCase) (*Result, *fake.Clientset, string, error) {
	t.Helper()
	cs := fake.NewClientset()
	var mu sync.Mutex
	i := 0
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		s := tc.steps[min(i, len(tc.steps)-1)]
		i++
		if s.err != nil {
			return true, nil, s.err
		}
		return true, s.pod.DeepCopy(), nil
	})
	var stderr strings.Builder
	o := &options{
		pollInterval: 2 * time.Millisecond, pendingTimeout: 20 * time.Millisecond, hungGrace: 20 * time.Millisecond,
		notFoundGrace: 20 * time.Millisecond, apiRetryTimeout: time.Minute,
		killHungDriver: true, killOnCancel: true, logTail: 5, stderr: &stderr,
	}
	if tc.opts != nil {
		tc.opts(o)
	}
	o = mustOptions(t, use(*o))
	logs := &fakeLogs{data: tc.logs}
	w := &driverWatch{client: cs, logs: logs, ns: "ns", pod: "app-driver", o: o, now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	if tc.ctx != nil {
		ctx, cancel = tc.ctx(ctx)
	}
	defer cancel()
	res := &Result{Backend: "k8s", Timings: Timings{Started: time.Now()}}
	err := w.run(ctx, res)
	res.finish(time.Now(), err)
	return res, cs, stderr.String(), err
}
