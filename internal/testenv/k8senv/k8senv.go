// Package k8senv is the API-server-only test world: a real etcd +
// kube-apiserver on 127.0.0.1 (cluster.LaunchControlPlane's options for
// it), shared by a test binary (Shared: a namespace per test) or private
// to a test (Start), and the pieces no kubelet provides there: a test
// kubelet that binds driver pods to a fake node, sets their status and
// serves their logs (Kubelet), and a fault proxy between the client and
// the API server (FaultProxy). submit/k8s's server tests and test/parity's
// live oracles use it; the real node is internal/testenv/cluster's.
package k8senv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/cluster"
)

// Cluster is a running etcd + kube-apiserver on 127.0.0.1.
type Cluster struct {
	// Dir holds the servers' files (ControlPlane.Dir).
	Dir string
	// URL is the API server's; CAFile its CA; AdminToken a bearer token of
	// system:masters and Admin a client with it.
	URL        string
	CAFile     string
	AdminToken string
	Admin      kubernetes.Interface
	// shared is the test binary's one cluster (Shared); its tests
	// empty the namespaces they use when they end.
	shared bool
	// Ready is how long etcd + kube-apiserver took to answer /readyz.
	Ready time.Duration

	mu      sync.Mutex
	onStop  []func() // run in reverse by Stop, before the servers stop
	cp      *cluster.ControlPlane
	kubelet *Kubelet
	apps    dynamic.NamespaceableResourceInterface // the test CRD, once installed

	kubeletMu sync.Mutex // held while the kubelet starts
	emptied   sync.Map   // (t, namespace) → true: EnsureNamespace's cleanups
}

// Binary is the path of a Kubernetes server binary (etcd, kube-apiserver,
// kube-controller-manager): $PREBAKE_<NAME>, else the cache
// hack/infra.d/50-k8s.sh fills, else PATH (testenv.Binary).
func Binary(t testing.TB, name string) string {
	t.Helper()
	env := "PREBAKE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if p := os.Getenv(env); p != "" {
		return p
	}
	// The cache first: a Debian etcd 3.4 on PATH is too old.
	if p := filepath.Join(testenv.CacheDir(), "k8s-current", name); exists(p) {
		return p
	}
	return testenv.Binary(t, name, env)
}

// The control-plane starts of this test binary, for the summary stop
// prints at its end.
var (
	startsMu    sync.Mutex
	starts      int
	startsReady time.Duration
)

func countStart(ready time.Duration) int {
	startsMu.Lock()
	defer startsMu.Unlock()
	if starts == 0 {
		testenv.AtExit(stop) // testenv.Main runs it
	}
	starts++
	startsReady += ready
	return starts
}

// shared is the test binary's one etcd + kube-apiserver (Shared),
// stopped at the binary's end (stop).
var shared testenv.Shared[*Cluster]

// Shared returns the test binary's etcd + kube-apiserver, started on
// the first call. Tests share it: each uses namespaces of its own (emptied
// when it ends: EnsureNamespace), its own service account and token Secrets
// (SetupSubmitter), and cluster-scoped objects either created once for all
// (the fake node, the ClusterRoles, the test CRD) or named after its
// service account's namespace.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	testenv.RequireIT(t)
	Binary(t, "etcd")
	Binary(t, "kube-apiserver")
	return shared.Get(t, func() (*Cluster, error) {
		dir, err := os.MkdirTemp("", "prebake-k8s-it-")
		if err != nil {
			return nil, fmt.Errorf("the shared kube-apiserver: %w", err)
		}
		c, err := launch(dir)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("the shared kube-apiserver: %w", err)
		}
		c.shared = true
		n := countStart(c.Ready)
		t.Logf("etcd + kube-apiserver (the test binary's shared one, start %d) ready in %s", n, c.Ready.Round(10*time.Millisecond))
		return c, nil
	})
}

// stop stops the shared cluster, if one was started, and reports this
// binary's starts (private ones included) on stderr, naming the test
// binary. The first start registers it with testenv.AtExit.
func stop() {
	shared.Close(func(c *Cluster) {
		if c != nil {
			c.Stop(func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
			_ = os.RemoveAll(c.Dir)
		}
	})
	startsMu.Lock()
	defer startsMu.Unlock()
	if starts > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d etcd + kube-apiserver start(s), %s to ready in all\n",
			strings.TrimSuffix(filepath.Base(os.Args[0]), ".test"), starts, startsReady.Round(10*time.Millisecond))
	}
}

// Start starts a private etcd + kube-apiserver; they stop in
// t.Cleanup (kube-apiserver first). Only tests that cannot share the
// control plane use it (see Shared): today submit/k8s's warmJobScenario
// (it runs kube-controller-manager) and test/parity's
// TestSparkOperatorRealIT (the operator's own SparkApplication CRD and
// controller).
func Start(t testing.TB) *Cluster {
	t.Helper()
	Binary(t, "etcd")
	Binary(t, "kube-apiserver")
	c, err := launch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(t.Logf) })
	n := countStart(c.Ready)
	t.Logf("etcd + kube-apiserver (private, start %d) ready in %s", n, c.Ready.Round(10*time.Millisecond))
	return c
}

// launch starts etcd and kube-apiserver with their files in dir
// (the control plane's one launcher: cluster.LaunchControlPlane) and waits
// until the API server is ready; on an error nothing is left running.
func launch(dir string) (*Cluster, error) {
	// The default service account controller does not run here.
	cp, err := cluster.LaunchControlPlane(context.Background(), dir,
		cluster.APIServerFlags("--disable-admission-plugins=ServiceAccount"))
	if err != nil {
		return nil, err
	}
	return &Cluster{cp: cp, Dir: cp.Dir, URL: cp.Server, CAFile: cp.CAFile, AdminToken: cp.Token, Admin: cp.Client, Ready: cp.Ready}, nil
}

// RESTConfig is an admin client's configuration for c.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{Host: c.URL, BearerToken: c.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAFile: c.CAFile}}
}

// AtStop runs fn when c stops, before its servers stop.
func (c *Cluster) AtStop(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onStop = append(c.onStop, fn)
}

// Stop runs the atStop functions, then stops kube-apiserver, then etcd.
func (c *Cluster) Stop(logf func(string, ...any)) {
	c.mu.Lock()
	onStop, cp := c.onStop, c.cp
	c.onStop, c.cp = nil, nil
	c.mu.Unlock()
	for i := len(onStop) - 1; i >= 0; i-- {
		onStop[i]()
	}
	if cp != nil {
		cp.Stop(logf)
	}
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// SelfSigned makes a serving certificate for host, usable as its own CA.
func SelfSigned(t testing.TB, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := selfSignedPEM(host)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

func selfSignedPEM(host string) (certPEM, keyPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.ParseIP(host)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
}

// SetupSubmitter creates the submission's service account with only the
// rights spark-submit and prebake need, in every namespace. The
// ClusterRole is made once per cluster; its binding is named after ns
// (give each test its own ns) and goes when t ends.
func (c *Cluster) SetupSubmitter(t testing.TB, ns, sa string) {
	t.Helper()
	c.EnsureNamespace(t, ns)
	if _, err := c.Admin.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.BindClusterRole(t, "spark-submitter", ns, sa, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{"sparkoperator.k8s.io"}, Resources: []string{"sparkapplications"}, Verbs: []string{"get", "create", "delete"}},
	})
}

// BindClusterRole creates the ClusterRole role with rules (unless it is
// there) and binds it to ns/sa in a ClusterRoleBinding role-ns, deleted
// when t ends.
func (c *Cluster) BindClusterRole(t testing.TB, role, ns, sa string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + "-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}}}
	if _, err := c.Admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c.shared {
		t.Cleanup(func() {
			if err := c.Admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting ClusterRoleBinding %s: %v", binding.Name, err)
			}
		})
	}
}

// EnsureNamespace creates ns unless it is there. On the shared cluster,
// the namespace is emptied when t ends (it stays, so that -count=2 finds
// it).
func (c *Cluster) EnsureNamespace(t testing.TB, ns string) {
	t.Helper()
	_, err := c.Admin.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if !c.shared {
		return
	}
	type key struct {
		t  testing.TB
		ns string
	}
	if _, dup := c.emptied.LoadOrStore(key{t, ns}, true); dup {
		return
	}
	t.Cleanup(func() {
		c.emptied.Delete(key{t, ns})
		if err := c.emptyNamespace(context.Background(), ns); err != nil {
			t.Errorf("emptying namespace %s: %v", ns, err)
		}
	})
}

// emptyNamespace deletes what the tests create in ns (pods at once: no
// kubelet confirms a graceful deletion) and the test kubelet's logs of it.
func (c *Cluster) emptyNamespace(ctx context.Context, ns string) error {
	zero := int64(0)
	all := metav1.ListOptions{}
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	// No controller removes the pvc-protection finalizer here.
	pvcs, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).List(ctx, all)
	if err != nil {
		return err
	}
	for _, p := range pvcs.Items {
		if len(p.Finalizers) == 0 {
			continue
		}
		p.Finalizers = nil
		if _, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).Update(ctx, &p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	errs := []error{
		c.Admin.CoreV1().Pods(ns).DeleteCollection(ctx, now, all),
		c.Admin.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, now, all),
		c.Admin.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, now, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"}),
		c.Admin.CoreV1().Secrets(ns).DeleteCollection(ctx, now, all),
		c.Admin.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, now, all),
		c.Admin.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, now, all),
	}
	svcs, err := c.Admin.CoreV1().Services(ns).List(ctx, all)
	errs = append(errs, err)
	if err == nil {
		for _, s := range svcs.Items {
			if err := c.Admin.CoreV1().Services(ns).Delete(ctx, s.Name, now); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	c.mu.Lock()
	apps, k := c.apps, c.kubelet
	c.mu.Unlock()
	if apps != nil {
		errs = append(errs, apps.Namespace(ns).DeleteCollection(ctx, now, all))
	}
	if k != nil {
		k.forget(ns)
	}
	return errors.Join(errs...)
}

// BoundToken issues a TokenRequest token for sa bound to a new Secret
// secretName; deleting the Secret revokes the token.
func (c *Cluster) BoundToken(t testing.TB, ns, sa, secretName string) string {
	t.Helper()
	ctx := context.Background()
	sec, err := c.Admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: sec.Name, UID: sec.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// WaitRevoked waits until the API server rejects token (its token cache
// keeps a revoked token valid for about 10 s).
func (c *Cluster) WaitRevoked(t testing.TB, token string) time.Duration {
	t.Helper()
	start := time.Now()
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: c.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: c.CAFile}})
	for time.Since(start) < 60*time.Second {
		_, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{Limit: 1})
		if apierrors.IsUnauthorized(err) {
			return time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatal("the revoked token still works after 60s")
	return 0
}

// WriteKubeconfig writes an admin kubeconfig for c.
func (c *Cluster) WriteKubeconfig(t testing.TB, path string) {
	t.Helper()
	testenv.WriteFile(t, path, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: it, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: it, context: {cluster: it, user: admin}}]
current-context: it
`, c.URL, c.CAFile, c.AdminToken))
}

// InstallSparkOperatorCRD installs a schemaless SparkApplication CRD,
// once per cluster, and waits until it is served; it returns an admin
// dynamic client for it.
func (c *Cluster) InstallSparkOperatorCRD(t testing.TB) dynamic.NamespaceableResourceInterface {
	t.Helper()
	c.mu.Lock()
	apps := c.apps
	c.mu.Unlock()
	if apps != nil {
		return apps
	}
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sparkapplications.sparkoperator.k8s.io",
			// as the kubeflow chart does: *.k8s.io groups need it
			"annotations": map[string]any{"api-approved.kubernetes.io": "https://github.com/kubeflow/spark-operator/pull/1298"}},
		"spec": map[string]any{
			"group": "sparkoperator.k8s.io", "scope": "Namespaced",
			"names": map[string]any{"plural": "sparkapplications", "singular": "sparkapplication", "kind": "SparkApplication", "listKind": "SparkApplicationList"},
			"versions": []any{map[string]any{
				"name": "v1beta2", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	apps = dyn.Resource(cluster.SparkAppGVR)
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		_, err := apps.Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err == nil {
			c.mu.Lock()
			c.apps = apps
			c.mu.Unlock()
			return apps
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("SparkApplication CRD not served after 30s: %v", err)
		}
	}
}
