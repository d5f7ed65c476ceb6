package spark

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/submit/k8s"
)

// TestProbeAPIServerIT asks the real API server: the admin token may do
// everything a submission needs; a service account whose Role grants
// pods only is denied the services and configmaps, as its submission
// would be (review 4, HIGH 1's 403).
func TestProbeAPIServerIT(t *testing.T) {
	testenv.RequireIT(t)
	c := k8scluster.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "doctor-probe"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	master := "k8s://" + c.Server
	denied := func(p *k8s.Probe) []string {
		out := []string{}
		for _, a := range p.Access {
			if !a.Allowed {
				out = append(out, a.Verb+" "+a.Resource)
			}
		}
		return out
	}
	admin, err := k8s.ProbeAPIServer(ctx, master, map[string]string{"spark.kubernetes.authenticate.submission.oauthToken": c.Token, "spark.kubernetes.authenticate.submission.caCertFile": c.CAFile, "spark.kubernetes.namespace": ns}, k8s.SubmitNeeds, 10*time.Second)
	if err != nil || !admin.Reachable || admin.Error != "" {
		t.Fatalf("admin: %+v, %v", admin, err)
	}
	if diff := cmp.Diff([]string{}, denied(admin)); diff != "" {
		t.Errorf("admin denied (-want +got):\n%s", diff)
	}

	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "pods-only"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pods-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "watch", "create", "delete"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pods-only"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pods-only"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "pods-only", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "pods-only", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa, err := k8s.ProbeAPIServer(ctx, master, map[string]string{"spark.kubernetes.authenticate.submission.oauthToken": tok.Status.Token, "spark.kubernetes.authenticate.submission.caCertFile": c.CAFile, "spark.kubernetes.namespace": ns}, k8s.SubmitNeeds, 10*time.Second)
	if err != nil || !sa.Reachable || sa.Error != "" {
		t.Fatalf("pods-only: %+v, %v", sa, err)
	}
	want := []string{"create services", "patch services", "create configmaps", "patch configmaps"}
	if diff := cmp.Diff(want, denied(sa)); diff != "" {
		t.Errorf("pods-only denied (-want +got):\n%s", diff)
	}
}
