package k8s

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv/k8senv"
)

// TestNativeSubmitIT: with --submitter native, the driver is followed by
// the same code as with spark-submit: exit codes passed through, hung
// drivers detected and deleted. spark-submit is never run (its path does
// not exist).
func TestNativeSubmitIT(t *testing.T) {
	e := newITEnv(t)
	grantOwned(t, e)
	native := func(o *options) {
		o.submitter, o.driverSparkVersion, o.sparkSubmit = SubmitterNative, "3.5.9", "/nonexistent/spark-submit"
	}
	for _, tc := range []struct {
		name  string
		ns    string
		lines []string
		end   func(*corev1.PodStatus)
		want  itWant
	}{
		{"succeeded", "nat-ok", nil, k8senv.PhaseWith(corev1.PodSucceeded, terminated(driverC, 0, "Completed")), itWant{endOK, "Completed", "Succeeded"}},
		{"exit code passed through", "nat-fail", nil, k8senv.PhaseWith(corev1.PodFailed, terminated(driverC, 3, "Error")), itWant{endExit(3), "Error", "Failed"}},
		{"hung driver", "nat-hung", []string{"INFO ShutdownHookManager: Shutdown hook called"}, nil, itWant{endKind(errdefs.Hung), "DriverHung", "Running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pod string
			wait := e.kubeletScript(t, tc.ns, func(p string) {
				pod = p
				e.k.RunToEnd(t, tc.ns, p, append([]string{"INFO SparkContext: Running Spark version 3.5.9"}, tc.lines...), tc.end)
			})
			r := e.submit(t, itRun{ns: tc.ns, opts: native})
			wait()
			checkResult(t, r, tc.want)
			if tc.want.Reason == "DriverHung" && !e.deleted(t, tc.ns, pod) {
				t.Errorf("hung driver %s not deleted", pod)
			}
		})
	}
}

// grantOwned lets the submitter create what spark-submit itself needs
// beyond the pods: its Service and ConfigMap (and PVCs), owned by the pod.
func grantOwned(t testing.TB, e *itEnv) {
	t.Helper()
	e.c.BindClusterRole(t, "spark-submitter-owned", e.saNS, e.saName, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "configmaps", "persistentvolumeclaims"}, Verbs: []string{"create", "patch"}},
		// Spark 4.2+: the executors' NetworkPolicy.
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"create", "patch"}},
	})
}

// TestDriverEndIT: a Spark 4.3 driver that fails annotates its own pod
// with spark.exit-exception and writes the failure to its termination log;
// against the real API server (the pod patched and its status set as the
// driver and the kubelet would), the result carries both, redacted, and the
// one-line message names the exception.
func TestDriverEndIT(t *testing.T) {
	e := newITEnv(t)
	grantOwned(t, e)
	const ns = "driver-end"
	exc := "java.lang.IllegalStateException: no rows for 2026-12-01 (spark.hadoop.fs.s3a.secret.key=AKIAEXAMPLESECRET)\n\tat Main$.main(Main.scala:7)"
	wait := e.kubeletScript(t, ns, func(pod string) {
		patch := []byte(`{"metadata":{"annotations":{"` + ExitExceptionAnnotation + `":` + strconv.Quote(exc) + `}}}`)
		if _, err := e.c.Admin.CoreV1().Pods(ns).Patch(context.Background(), pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Errorf("annotating %s: %v", pod, err)
		}
		st := terminated(driverC, 1, "Error")
		st.State.Terminated.Message = "java.lang.IllegalStateException: no rows for 2026-12-01\n"
		e.k.RunToEnd(t, ns, pod, []string{"INFO SparkContext: Running Spark version 4.3.0"}, k8senv.PhaseWith(corev1.PodFailed, st))
	})
	r := e.submit(t, itRun{ns: ns, opts: func(o *options) {
		o.submitter, o.driverSparkVersion, o.sparkSubmit = SubmitterNative, "4.3.0", "/nonexistent/spark-submit"
	}})
	wait()
	checkResult(t, r, itWant{endExit(1), "Error", "Failed"})
	if r.res == nil {
		t.Fatal("no result")
	}
	if !strings.HasPrefix(r.res.ExitException, "java.lang.IllegalStateException: no rows for 2026-12-01") ||
		strings.Contains(r.res.ExitException, "AKIAEXAMPLESECRET") {
		t.Errorf("exitException %q: want the annotation, redacted", r.res.ExitException)
	}
	if r.res.TerminationMessage != "java.lang.IllegalStateException: no rows for 2026-12-01" {
		t.Errorf("terminationMessage %q", r.res.TerminationMessage)
	}
	if !strings.Contains(r.res.Message, "the driver: java.lang.IllegalStateException: no rows") || strings.Contains(r.res.Message, "AKIAEXAMPLESECRET") {
		t.Errorf("message %q", r.res.Message)
	}
}
