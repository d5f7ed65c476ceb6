package k8s

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		{"succeeded", "nat-ok", nil, phaseWith(corev1.PodSucceeded, terminated(driverC, 0, "Completed")), itWant{0, "driver", "Completed", "Succeeded"}},
		{"exit code passed through", "nat-fail", nil, phaseWith(corev1.PodFailed, terminated(driverC, 3, "Error")), itWant{3, "driver", "Error", "Failed"}},
		{"hung driver", "nat-hung", []string{"INFO ShutdownHookManager: Shutdown hook called"}, nil, itWant{79, "prebake", "DriverHung", "Running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pod string
			wait := e.kubeletScript(t, tc.ns, func(p string) {
				pod = p
				e.runToEnd(t, tc.ns, p, append([]string{"INFO SparkContext: Running Spark version 3.5.9"}, tc.lines...), tc.end)
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
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "spark-submitter-owned"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "configmaps", "persistentvolumeclaims"}, Verbs: []string{"create", "patch"}},
	}}
	if _, err := e.c.admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "spark-submitter-owned"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: e.saNS, Name: e.saName}}}
	if _, err := e.c.admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
