package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/k8senv"
)

// itEnv is the shared cluster of TestK8sIT.
type itEnv struct {
	c       *k8senv.Cluster
	k       *k8senv.Kubelet
	saDir   string // the process's own in-cluster service account (admin!)
	saNS    string
	saName  string
	fakeSub string
}

// itRun is one prebake submit against the cluster.
type itRun struct {
	ns        string
	name      string // --name
	master    string // default: the API server itself
	caFile    string
	tokenFile string
	env       []string // fake spark-submit knobs
	opts      func(*options)
	ctx       context.Context
	conf      []string // more argv before --class
}

type itResult struct {
	res    *Result
	err    error
	stdout string
	stderr string
}

// fill sets the defaults of a run; each run gets its own bound token.
func (e *itEnv) fill(t testing.TB, r *itRun) {
	t.Helper()
	if r.master == "" {
		r.master = e.c.URL
	}
	if r.caFile == "" {
		r.caFile = e.c.CAFile
	}
	if r.tokenFile == "" {
		r.tokenFile = filepath.Join(t.TempDir(), "token")
		testenv.WriteFile(t, r.tokenFile, e.c.BoundToken(t, e.saNS, e.saName, "tok-"+r.ns))
	}
	if r.name == "" {
		r.name = "it-" + r.ns
	}
}

func (e *itEnv) submit(t testing.TB, r itRun) itResult {
	t.Helper()
	e.fill(t, &r)
	args := e.args(r)
	var stderr testenv.SyncBuffer
	o := options{
		sparkSubmit: e.fakeSub, pollInterval: 200 * time.Millisecond, pendingTimeout: 30 * time.Second,
		hungGrace: 2 * time.Second, notFoundGrace: 1500 * time.Millisecond, apiRetryTimeout: 30 * time.Second,
		killHungDriver: true, killOnCancel: true, logTail: 5, stderr: &stderr,
		// spark-submit's variables (FAKE_*) after this process's; then, last
		// so that they win: the process runs "in a pod" whose own service
		// account is an admin: prebake must never use it, since the
		// submission has a token.
		environ: slices.Concat(hostEnviron(), r.env, mapEnv(map[string]string{
			"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": strings.TrimPrefix(e.c.URL, "https://127.0.0.1:"),
			"HOME": t.TempDir(),
		})),
		inClusterDir: e.saDir,
	}
	if r.opts != nil {
		r.opts(&o)
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := submitWith(ctx, mustLoad(t, args, o.environ), use(o))
	// The keys `prebake submit -o json` prints (cmd adds exitCode and
	// source from the error's kind, in its own order); here only the
	// driver's own outcomes have a code (0 or the driver's), prebake's
	// kinds show -1.
	doc := struct {
		ExitCode int    `json:"exitCode"`
		Source   string `json:"source"`
		*Result
	}{-1, "prebake", res}
	end := endOf(res.Err())
	if end.Driver {
		doc.Source = "driver"
	}
	if end == endOK || end.Kind == errdefs.DriverExit {
		doc.ExitCode = end.Code
	}
	js, jerr := json.MarshalIndent(doc, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return itResult{res, err, string(js), stderr.String()}
}

// args is the spark-submit argv of a run.
func (e *itEnv) args(r itRun) []string {
	return append(append([]string{
		"--master", "k8s://" + r.master, "--deploy-mode", "cluster", "--name", r.name,
		"--conf", "spark.kubernetes.namespace=" + r.ns,
		"--conf", confOAuthTokenFile + "=" + r.tokenFile,
		"--conf", confCACertFile + "=" + r.caFile,
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.3",
	}, r.conf...), "--class", "org.example.Main", "local:///opt/app.jar", "arg1")
}

// cli returns the prebake binary set up to submit r (stdout and stderr are
// *testenv.SyncBuffer).
func (e *itEnv) cli(t testing.TB, r itRun, global ...string) *exec.Cmd {
	t.Helper()
	e.fill(t, &r)
	args := append(global, "submit", "--spark-submit", e.fakeSub, "--poll-interval", "200ms", "--log-tail", "5", "--")
	cmd := exec.Command(e.prebake(t), append(args, e.args(r)...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=", "SPARK_HOME=")
	cmd.Stdout, cmd.Stderr = &testenv.SyncBuffer{}, &testenv.SyncBuffer{}
	return cmd
}

// prebake is the CLI, built once per test binary.
func (e *itEnv) prebake(t testing.TB) string {
	t.Helper()
	return testenv.Prebake(t)
}

func mapEnv(m map[string]string) []string { return testenv.Environ(m) }

// hostEnviron is this process's environment without the variables that
// name a cluster's credentials (KUBECONFIG, KUBERNETES_SERVICE_*): what a
// test submission's spark-submit runs with, while its credentials are only
// the ones the test gives.
func hostEnviron() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "KUBERNETES_SERVICE_")
	})
}

// kubeletScript runs fn for the driver pod of ns in the background; wait
// returns when it is done.
func (e *itEnv) kubeletScript(t testing.TB, ns string, fn func(pod string)) (wait func()) {
	t.Helper()
	e.c.EnsureNamespace(t, ns)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if pod := e.k.WaitPod(t, ns); pod != "" {
			fn(pod)
		}
	}()
	return func() { <-done }
}

// runExecutor creates executor id of the driver's application (as the
// driver would) and sets its container status.
func (e *itEnv) runExecutor(t testing.TB, ns, driverPod, id string, st corev1.ContainerStatus) {
	ctx := context.Background()
	d, err := e.c.Admin.CoreV1().Pods(ns).Get(ctx, driverPod, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	name := strings.TrimSuffix(driverPod, "-driver") + "-exec-" + id
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"spark-role": "executor", "spark-exec-id": id, "spark-app-selector": d.Labels["spark-app-selector"]}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "spark-kubernetes-executor", Image: "apache/spark:3.5.3"}}}}
	if _, err := e.c.Admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Error(err)
		return
	}
	e.k.SetStatus(t, ns, name, k8senv.PhaseWith(corev1.PodFailed, st))
}

// deleted reports whether the pod is gone or being deleted (no kubelet
// confirms a graceful deletion here).
func (e *itEnv) deleted(t testing.TB, ns, pod string) bool {
	p, err := e.c.Admin.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return p.DeletionTimestamp != nil
}

type itWant struct {
	End    runEnd
	Reason string
	Phase  string
}

func checkResult(t testing.TB, r itResult, want itWant) {
	t.Helper()
	got := itWant{endOf(r.err), r.res.Reason, r.res.Phase}
	if r.err == nil {
		got.End.Driver = endOf(r.res.Err()).Driver
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("result (-want +got):\n%s\nerr: %v\nstdout:\n%s\nstderr:\n%s", d, r.err, r.stdout, r.stderr)
	}
}

// newITEnv is an environment on the shared cluster (k8senv.Shared) with
// the submission's service account of its own.
func newITEnv(t testing.TB) *itEnv {
	t.Helper()
	testenv.RequireIT(t)
	return newITEnvOn(t, k8senv.Shared(t))
}

// itEnvs numbers the environments: each has its own service-account
// namespace (spark-it-N), so its tokens and RBAC are its own.
var itEnvs atomic.Int64

// newITEnvOn sets up the test kubelet of c and a service account for the
// submissions, in a namespace of its own.
func newITEnvOn(t testing.TB, c *k8senv.Cluster) *itEnv {
	t.Helper()
	e := &itEnv{c: c, k: k8senv.StartKubelet(t, c), saNS: fmt.Sprintf("spark-it-%d", itEnvs.Add(1)), saName: "submitter"}
	c.SetupSubmitter(t, e.saNS, e.saName)
	e.saDir = filepath.Join(t.TempDir(), "serviceaccount")
	testenv.WriteFile(t, filepath.Join(e.saDir, "token"), c.AdminToken)
	testenv.WriteFile(t, filepath.Join(e.saDir, "namespace"), "default")
	wd, _ := os.Getwd()
	e.fakeSub = filepath.Join(wd, "testdata", "k8s", "spark-submit")
	return e
}

func TestK8sIT(t *testing.T) {
	e := newITEnv(t)
	t.Run("group", func(t *testing.T) {
		t.Run("succeeded with sidecar and generated pod name", func(t *testing.T) {
			t.Parallel()
			ns := "it-ok"
			argv := filepath.Join(t.TempDir(), "argv")
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.k.RunToEnd(t, ns, pod, []string{"INFO SparkContext: Running Spark version 3.5.3"},
					k8senv.PhaseWith(corev1.PodRunning, terminated(driverC, 0, "Completed"), running("istio-proxy")))
			})
			r := e.submit(t, itRun{ns: ns, env: []string{"FAKE_SPARK_SUBMIT_SIDECAR=1", "FAKE_SPARK_SUBMIT_ARGV=" + argv}})
			wait()
			checkResult(t, r, itWant{endOK, "Completed", "Running"})
			if !strings.HasPrefix(r.res.Pod, "it-it-ok-") || !strings.HasSuffix(r.res.Pod, "-driver") {
				t.Errorf("generated pod name %q", r.res.Pod)
			}
			got := strings.Join(readLines(t, argv), " ")
			for _, want := range []string{"--conf spark.kubernetes.submission.waitAppCompletion=false --conf spark.kubernetes.driver.pod.name=" + r.res.Pod + " local:///opt/app.jar arg1"} {
				if !strings.Contains(got, want) {
					t.Errorf("spark-submit argv %q lacks %q", got, want)
				}
			}
			var js map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
			}
			if js["submissionId"] != ns+":"+r.res.Pod || js["exitCode"] != 0.0 || js["source"] != "driver" || js["driverExitCode"] != 0.0 {
				t.Errorf("JSON: %s", r.stdout)
			}
			if tm, ok := js["timings"].(map[string]any); !ok || tm["running"] == nil || tm["totalSeconds"].(float64) <= 0 {
				t.Errorf("JSON timings: %v", js["timings"])
			}
		})

		t.Run("OOMKilled with the log tail through the API server", func(t *testing.T) {
			t.Parallel()
			ns := "it-oom"
			var lines []string
			for i := 1; i <= 60; i++ {
				lines = append(lines, "driver line "+strings.Repeat("x", i%3)+string(rune('a'+i%26)))
			}
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.runExecutor(t, ns, pod, "1", terminated("spark-kubernetes-executor", 52, "Error"))
				e.k.RunToEnd(t, ns, pod, lines, k8senv.PhaseWith(corev1.PodFailed, terminated(driverC, 137, "OOMKilled")))
			})
			r := e.submit(t, itRun{ns: ns})
			wait()
			checkResult(t, r, itWant{endExit(137), "OOMKilled", "Failed"})
			if len(r.res.ExecutorFailures) != 1 || r.res.ExecutorFailures[0].Explanation != "JVM OOM" || r.res.ExecutorFailures[0].ExecutorID != "1" {
				t.Errorf("executor failures %+v", r.res.ExecutorFailures)
			}
			if d := cmp.Diff(lines[55:], r.res.LogTail); d != "" {
				t.Errorf("log tail (-want +got):\n%s", d)
			}
			if !strings.Contains(r.stdout, "memory limit") || !strings.Contains(r.stdout, `"exitCode": 137`) {
				t.Errorf("the result does not explain the OOM kill:\n%s", r.stdout)
			}
		})

		for _, reason := range []string{"ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "CrashLoopBackOff", "Unschedulable"} {
			t.Run("stuck "+reason, func(t *testing.T) {
				t.Parallel()
				ns := "it-stuck-" + strings.ToLower(reason)
				var pod string
				wait := e.kubeletScript(t, ns, func(p string) {
					pod = p
					if reason == "Unschedulable" {
						e.k.SetStatus(t, ns, p, func(s *corev1.PodStatus) {
							s.Phase = corev1.PodPending
							s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient memory."}}
						})
						return
					}
					e.k.Bind(t, ns, p)
					e.k.SetStatus(t, ns, p, k8senv.PhaseWith(corev1.PodPending, waiting(driverC, reason)))
				})
				r := e.submit(t, itRun{ns: ns, opts: func(o *options) { o.pendingTimeout = 3 * time.Second }})
				wait()
				checkResult(t, r, itWant{endKind(errdefs.Timeout), reason, "Pending"})
				if !strings.Contains(r.err.Error(), reason) || !e.deleted(t, ns, pod) {
					t.Errorf("err %v; pod deleted %v", r.err, e.deleted(t, ns, pod))
				}
			})
		}

		t.Run("pod never created", func(t *testing.T) {
			t.Parallel()
			r := e.submit(t, itRun{ns: "it-nopod", env: []string{"FAKE_SPARK_SUBMIT_NO_POD=1"}})
			checkResult(t, r, itWant{endKind(errdefs.NotFound), "PodNotFound", "NotFound"})
		})

		t.Run("pod deleted while running", func(t *testing.T) {
			t.Parallel()
			ns := "it-deleted"
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.k.RunToEnd(t, ns, pod, nil, nil)
				if err := e.c.Admin.CoreV1().Pods(ns).Delete(context.Background(), pod, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
					t.Error(err)
				}
			})
			r := e.submit(t, itRun{ns: ns})
			wait()
			checkResult(t, r, itWant{endDriverFailed, "PodDeleted", "Deleted"})
		})

		t.Run("spark-submit fails", func(t *testing.T) {
			t.Parallel()
			r := e.submit(t, itRun{ns: "it-subfail", env: []string{"FAKE_SPARK_SUBMIT_EXIT=3"}})
			checkResult(t, r, itWant{endKind(errdefs.BadArgument), "SubmitFailed", "Submitting"})
			if r.res.SparkSubmitExitCode == nil || *r.res.SparkSubmitExitCode != 3 || !strings.Contains(r.err.Error(), "exited with code 3") || !strings.Contains(r.err.Error(), "fake failure") {
				t.Errorf("err %v", r.err)
			}
		})

		for _, tc := range []struct {
			name  string
			lines []string
			want  itWant
		}{
			{"hung driver with SparkContext exit code", []string{"INFO SparkContext: SparkContext is stopping with exitCode 3.", "INFO SparkContext: Successfully stopped SparkContext"}, itWant{endExit(3), "DriverHung", "Running"}},
			{"hung driver after shutdown hook", []string{"INFO ShutdownHookManager: Shutdown hook called"}, itWant{endKind(errdefs.Hung), "DriverHung", "Running"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				ns := "it-hung-" + map[bool]string{true: "code", false: "hook"}[tc.want.End.Code == 3]
				var pod string
				wait := e.kubeletScript(t, ns, func(p string) {
					pod = p
					e.k.RunToEnd(t, ns, p, append([]string{"INFO SparkContext: Running Spark version 3.5.3"}, tc.lines...), nil)
				})
				r := e.submit(t, itRun{ns: ns})
				wait()
				checkResult(t, r, tc.want)
				if !strings.Contains(r.res.Message, "driver hung after SparkContext stopped") || !e.deleted(t, ns, pod) {
					t.Errorf("message %q; pod deleted %v", r.res.Message, e.deleted(t, ns, pod))
				}
			})
		}

		t.Run("cancel deletes the driver", func(t *testing.T) {
			t.Parallel()
			ns := "it-cancel"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var pod string
			wait := e.kubeletScript(t, ns, func(p string) {
				pod = p
				e.k.RunToEnd(t, ns, p, nil, nil)
				cancel()
			})
			r := e.submit(t, itRun{ns: ns, ctx: ctx})
			wait()
			checkResult(t, r, itWant{endCancelled, "Cancelled", "Running"})
			if !e.deleted(t, ns, pod) {
				t.Error("driver pod not deleted on cancel")
			}
		})

		t.Run("timeout", func(t *testing.T) {
			t.Parallel()
			ns := "it-timeout"
			var pod string
			wait := e.kubeletScript(t, ns, func(p string) { pod = p; e.k.RunToEnd(t, ns, p, nil, nil) })
			r := e.submit(t, itRun{ns: ns, opts: func(o *options) { o.timeout = 4 * time.Second }})
			wait()
			checkResult(t, r, itWant{endKind(errdefs.Timeout), "Timeout", "Running"})
			if !e.deleted(t, ns, pod) {
				t.Error("driver pod not deleted on timeout")
			}
		})

		t.Run("fault proxy: 5xx, dropped connections, one 401", func(t *testing.T) {
			t.Parallel()
			ns := "it-faults"
			p := k8senv.StartFaultProxy(t, e.c, map[int]string{2: "503", 3: "drop", 4: "401", 5: "503", 7: "drop", 8: "503"})
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.k.RunToEnd(t, ns, pod, nil, nil)
				time.Sleep(2 * time.Second) // let the faults happen while it runs
				e.k.SetStatus(t, ns, pod, k8senv.PhaseWith(corev1.PodFailed, terminated(driverC, 3, "Error")))
			})
			r := e.submit(t, itRun{ns: ns, master: p.URL, caFile: p.CAFile})
			wait()
			checkResult(t, r, itWant{endExit(3), "Error", "Failed"})
			if d := cmp.Diff(map[string]int{"503": 3, "drop": 2, "401": 1}, p.Injected()); d != "" {
				t.Errorf("faults injected (-want +got):\n%s", d)
			}
		})

		t.Run("seed: token rotated and old one revoked", func(t *testing.T) {
			t.Parallel()
			ns := "it-rotate"
			p := k8senv.StartFaultProxy(t, e.c, nil)
			tokenFile := filepath.Join(t.TempDir(), "token")
			oldTok := e.c.BoundToken(t, e.saNS, e.saName, "tok-rotate-1")
			testenv.WriteFile(t, tokenFile, oldTok)
			var newTok string
			var revokedAfter time.Duration
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.k.RunToEnd(t, ns, pod, nil, nil)
				// Rotate the projected token, then revoke the old one.
				newTok = e.c.BoundToken(t, e.saNS, e.saName, "tok-rotate-2")
				tmp := tokenFile + ".tmp"
				testenv.WriteFile(t, tmp, newTok)
				if err := os.Rename(tmp, tokenFile); err != nil {
					t.Error(err)
				}
				if err := e.c.Admin.CoreV1().Secrets(e.saNS).Delete(context.Background(), "tok-rotate-1", metav1.DeleteOptions{}); err != nil {
					t.Error(err)
				}
				revokedAfter = e.c.WaitRevoked(t, oldTok)
				before := p.Uses(newTok)[200]
				for start := time.Now(); p.Uses(newTok)[200] < before+3 && time.Since(start) < 10*time.Second; {
					time.Sleep(100 * time.Millisecond)
				}
				e.k.SetStatus(t, ns, pod, k8senv.PhaseWith(corev1.PodSucceeded, terminated(driverC, 0, "Completed")))
			})
			r := e.submit(t, itRun{ns: ns, master: p.URL, caFile: p.CAFile, tokenFile: tokenFile})
			wait()
			t.Logf("old token revoked after %s; uses: old %v new %v", revokedAfter.Round(time.Second), p.Uses(oldTok), p.Uses(newTok))
			checkResult(t, r, itWant{endOK, "Completed", "Succeeded"})
			if p.Uses(newTok)[200] < 3 || p.Uses(oldTok)[401] != 0 {
				t.Errorf("new token answered 200 %d times (want ≥3); old token got %d 401s (want 0: prebake re-reads the file)", p.Uses(newTok)[200], p.Uses(oldTok)[401])
			}
			if u := p.Uses(e.c.AdminToken); len(u) != 0 {
				t.Errorf("the process's own in-cluster token was used: %v", u)
			}
		})

		t.Run("token revoked without rotation: 77, in-cluster token never used", func(t *testing.T) {
			t.Parallel()
			ns := "it-revoked"
			p := k8senv.StartFaultProxy(t, e.c, nil)
			tokenFile := filepath.Join(t.TempDir(), "token")
			tok := e.c.BoundToken(t, e.saNS, e.saName, "tok-revoked")
			testenv.WriteFile(t, tokenFile, tok)
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.k.RunToEnd(t, ns, pod, nil, nil)
				if err := e.c.Admin.CoreV1().Secrets(e.saNS).Delete(context.Background(), "tok-revoked", metav1.DeleteOptions{}); err != nil {
					t.Error(err)
				}
			})
			r := e.submit(t, itRun{ns: ns, master: p.URL, caFile: p.CAFile, tokenFile: tokenFile,
				opts: func(o *options) { o.timeout = 90 * time.Second }})
			wait()
			checkResult(t, r, itWant{endKind(errdefs.Denied), "Unauthorized", "Running"})
			if !strings.Contains(r.err.Error(), tokenFile) || strings.Contains(r.err.Error(), tok) {
				t.Errorf("error should name the token file, not the token: %v", r.err)
			}
			if p.Uses(tok)[401] < authRetries+1 {
				t.Errorf("401s for the revoked token: %v", p.Uses(tok))
			}
			if u := p.Uses(e.c.AdminToken); len(u) != 0 {
				t.Errorf("the process's own in-cluster token was used: %v", u)
			}
		})

		t.Run("CLI: driver exit code passes through", func(t *testing.T) {
			t.Parallel()
			ns := "it-cli-exit"
			wait := e.kubeletScript(t, ns, func(pod string) {
				e.k.RunToEnd(t, ns, pod, []string{"ERROR Main: boom"}, k8senv.PhaseWith(corev1.PodFailed, terminated(driverC, 3, "Error")))
			})
			cmd := e.cli(t, itRun{ns: ns}, "-o", "json")
			err := cmd.Run()
			wait()
			var js map[string]any
			if jerr := json.Unmarshal(cmd.Stdout.(*testenv.SyncBuffer).Bytes(), &js); jerr != nil || cmd.ProcessState.ExitCode() != 3 ||
				js["exitCode"] != 3.0 || js["source"] != "driver" || js["reason"] != "Error" || js["phase"] != "Failed" {
				t.Errorf("exit %d (%v), JSON %v (%v)\nstderr:\n%s", cmd.ProcessState.ExitCode(), err, js, jerr, cmd.Stderr)
			}
		})

		t.Run("CLI: SIGTERM deletes the driver", func(t *testing.T) {
			t.Parallel()
			ns := "it-cli-sigterm"
			cmd := e.cli(t, itRun{ns: ns})
			e.c.EnsureNamespace(t, ns)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			proc := cmd.Process
			var pod string
			wait := e.kubeletScript(t, ns, func(p string) {
				pod = p
				e.k.RunToEnd(t, ns, p, nil, nil)
				_ = proc.Signal(syscall.SIGTERM)
			})
			wait()
			_ = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != cliExitCancelled || !e.deleted(t, ns, pod) {
				t.Errorf("exit %d, pod deleted %v\nstdout:\n%s\nstderr:\n%s", code, e.deleted(t, ns, pod), cmd.Stdout, cmd.Stderr)
			}
		})

		t.Run("via operator", func(t *testing.T) {
			t.Parallel()
			apps := e.c.InstallSparkOperatorCRD(t)
			for _, tc := range []struct {
				ns    string
				final string
				code  int32
				want  itWant
			}{
				{"it-op-ok", "COMPLETED", 0, itWant{endOK, "Completed", "COMPLETED"}},
				{"it-op-fail", "FAILED", 101, itWant{endExit(101), "FAILED", "FAILED"}},
			} {
				t.Run(tc.final, func(t *testing.T) {
					t.Parallel()
					e.c.EnsureNamespace(t, tc.ns)
					done := make(chan struct{})
					var spec map[string]any
					go func() { // the test "operator"
						defer close(done)
						ctx := context.Background()
						app := k8scluster.WaitSparkApp(ctx, t, apps, tc.ns)
						if app == nil {
							return
						}
						spec, _, _ = unstructured.NestedMap(app.Object, "spec")
						pod := app.GetName() + "-driver"
						driver := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Labels: map[string]string{"spark-role": "driver"}},
							Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: driverC, Image: "apache/spark:3.5.3"}}}}
						if _, err := e.c.Admin.CoreV1().Pods(tc.ns).Create(ctx, driver, metav1.CreateOptions{}); err != nil {
							t.Error(err)
							return
						}
						for _, state := range []string{"SUBMITTED", "RUNNING", tc.final} {
							if state == tc.final {
								e.k.SetStatus(t, tc.ns, pod, k8senv.PhaseWith(corev1.PodFailed, terminated(driverC, tc.code, "Error")))
							}
							if !k8scluster.SetAppStatus(ctx, t, apps, tc.ns, app.GetName(), state, pod, "") {
								return
							}
							time.Sleep(500 * time.Millisecond)
						}
					}()
					r := e.submit(t, itRun{ns: tc.ns, opts: func(o *options) { o.via = "operator"; o.sparkSubmit = "" }})
					<-done
					checkResult(t, r, tc.want)
					if spec["mainClass"] != "org.example.Main" || spec["mainApplicationFile"] != "local:///opt/app.jar" {
						t.Errorf("SparkApplication spec: %v", spec)
					}
					if sc, _ := spec["sparkConf"].(map[string]any); sc[confOAuthTokenFile] != nil {
						t.Errorf("submission credentials leaked into sparkConf: %v", sc)
					}
				})
			}
		})

		t.Run("status and kill with a glob", func(t *testing.T) {
			t.Parallel()
			ns := "it-ops"
			e.c.EnsureNamespace(t, ns)
			for _, name := range []string{"nightly-a-driver", "nightly-b-driver", "other-driver"} {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"spark-role": "driver"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: driverC, Image: "apache/spark:3.5.3"}}}}
				if _, err := e.c.Admin.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			testenv.WriteFile(t, kc, "apiVersion: v1\nkind: Config\ncurrent-context: it\nclusters:\n- name: c\n  cluster: {server: \""+e.c.URL+"\", certificate-authority: \""+e.c.CAFile+"\"}\nusers:\n- name: u\n  user: {token: "+e.c.AdminToken+"}\ncontexts:\n- name: it\n  context: {cluster: c, user: u, namespace: "+ns+"}\n")
			o := options{environ: mapEnv(map[string]string{"KUBECONFIG": kc})}
			st, err := statusWith(context.Background(), "k8s://"+e.c.URL, ns+":nightly-*", use(o))
			if err != nil {
				t.Fatal(err)
			}
			if len(st) != 2 || st[0].Pod != "nightly-a-driver" || st[1].Pod != "nightly-b-driver" {
				t.Errorf("status: %+v", st)
			}
			tried, err := killWith(context.Background(), "k8s://"+e.c.URL, "nightly-*", use(o))
			if err != nil {
				t.Fatal(err)
			}
			if len(tried) != 2 || tried[0].Pod != "nightly-a-driver" || !tried[0].Deleting || !e.deleted(t, ns, "nightly-b-driver") || e.deleted(t, ns, "other-driver") {
				t.Errorf("kill: %+v", tried)
			}
			if _, err := statusWith(context.Background(), "k8s://"+e.c.URL, ns+":missing-driver", use(o)); errdefs.KindOf(err) != errdefs.NotFound {
				t.Errorf("status of a missing pod: %v", err)
			}
		})
	})
}
