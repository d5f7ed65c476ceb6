package k8s

// A real kube-apiserver + etcd for the K8s integration tests, started from
// the binaries hack/infra.d/50-k8s.sh caches, plus the pieces no kubelet
// provides here: a test "kubelet" that binds driver pods to a fake node,
// patches their status and serves their logs (the API server proxies
// pods/log to it), and a fault proxy between prebake and the API server.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// testCluster is a running etcd + kube-apiserver on 127.0.0.1.
type testCluster struct {
	dir        string
	url        string
	caFile     string
	adminToken string
	admin      kubernetes.Interface
	// shared is the test binary's one cluster (sharedCluster); its tests
	// empty the namespaces they use when they end.
	shared bool
	// ready is how long etcd + kube-apiserver took to answer /readyz.
	ready time.Duration

	mu      sync.Mutex
	onStop  []func() // run in reverse by stop, before the servers stop
	cp      *cluster.ControlPlane
	kubelet *testKubelet
	apps    dynamic.NamespaceableResourceInterface // the test CRD, once installed

	kubeletMu sync.Mutex // held while the kubelet starts
	emptied   sync.Map   // (t, namespace) → true: ensureNamespace's cleanups
}

func k8sBinary(t testing.TB, name string) string {
	t.Helper()
	env := "PREBAKE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if p := os.Getenv(env); p != "" {
		return p
	}
	// The cache first: a Debian etcd 3.4 on PATH is too old.
	if p := filepath.Join(testenv.CacheDir(), "k8s-current", name); fileExists(p) {
		return p
	}
	return testenv.Binary(t, name, env)
}

// The control-plane starts of this test binary, for TestMain's summary.
var (
	startsMu    sync.Mutex
	starts      int
	startsReady time.Duration
)

func countStart(ready time.Duration) int {
	startsMu.Lock()
	defer startsMu.Unlock()
	starts++
	startsReady += ready
	return starts
}

// shared is the test binary's one etcd + kube-apiserver (sharedCluster);
// TestMain stops it (stopSharedCluster).
var shared testenv.Shared[*testCluster]

// sharedCluster returns the test binary's etcd + kube-apiserver, started on
// the first call. Tests share it: each uses namespaces of its own (emptied
// when it ends: ensureNamespace), its own service account and token Secrets
// (newITEnv), and cluster-scoped objects either created once for all
// (the fake node, the ClusterRoles, the test CRD) or named after its
// service account's namespace.
func sharedCluster(t testing.TB) *testCluster {
	t.Helper()
	testenv.RequireIT(t)
	k8sBinary(t, "etcd")
	k8sBinary(t, "kube-apiserver")
	return shared.Get(t, func() (*testCluster, error) {
		dir, err := os.MkdirTemp("", "prebake-k8s-it-")
		if err != nil {
			return nil, fmt.Errorf("the shared kube-apiserver: %w", err)
		}
		c, err := launchCluster(dir)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("the shared kube-apiserver: %w", err)
		}
		c.shared = true
		n := countStart(c.ready)
		t.Logf("etcd + kube-apiserver (the test binary's shared one, start %d) ready in %s", n, c.ready.Round(10*time.Millisecond))
		return c, nil
	})
}

// stopSharedCluster stops the shared cluster, if one was started, and
// reports this binary's starts on stderr.
func stopSharedCluster() {
	shared.Close(func(c *testCluster) {
		if c != nil {
			c.stop(func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
			_ = os.RemoveAll(c.dir)
		}
	})
	startsMu.Lock()
	defer startsMu.Unlock()
	if starts > 0 {
		fmt.Fprintf(os.Stderr, "submit/k8s: %d etcd + kube-apiserver start(s), %s to ready in all\n", starts, startsReady.Round(10*time.Millisecond))
	}
}

// startCluster starts a private etcd + kube-apiserver; they stop in
// t.Cleanup (kube-apiserver first). Only tests that cannot share the
// control plane use it (see sharedCluster): today warmJobScenario (it runs
// kube-controller-manager) and TestSparkOperatorRealIT (the operator's own
// SparkApplication CRD and controller).
func startCluster(t testing.TB) *testCluster {
	t.Helper()
	k8sBinary(t, "etcd")
	k8sBinary(t, "kube-apiserver")
	c, err := launchCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(t.Logf) })
	n := countStart(c.ready)
	t.Logf("etcd + kube-apiserver (private, start %d) ready in %s", n, c.ready.Round(10*time.Millisecond))
	return c
}

// launchCluster starts etcd and kube-apiserver with their files in dir
// (the control plane's one launcher: cluster.LaunchControlPlane) and waits
// until the API server is ready; on an error nothing is left running.
func launchCluster(dir string) (*testCluster, error) {
	// The default service account controller does not run here.
	cp, err := cluster.LaunchControlPlane(context.Background(), dir,
		cluster.APIServerFlags("--disable-admission-plugins=ServiceAccount"))
	if err != nil {
		return nil, err
	}
	return &testCluster{cp: cp, dir: cp.Dir, url: cp.Server, caFile: cp.CAFile, adminToken: cp.Token, admin: cp.Client, ready: cp.Ready}, nil
}

// atStop runs fn when c stops, before its servers stop.
func (c *testCluster) atStop(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onStop = append(c.onStop, fn)
}

// stop runs the atStop functions, then stops kube-apiserver, then etcd.
func (c *testCluster) stop(logf func(string, ...any)) {
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

func startProc(t testing.TB, dir, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() { logf.Close() })
	return cmd
}

func stopProc(t testing.TB, cmd *exec.Cmd) { haltProc(cmd, t.Logf) }

// haltProc stops cmd with SIGTERM, or SIGKILL after 15 s.
func haltProc(cmd *exec.Cmd, logf func(string, ...any)) {
	testenv.StopProcess(cmd, 15*time.Second, logf)
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	return strings.Join(lastLines(b, n), "\n")
}

// selfSigned makes a serving certificate for host, usable as its own CA.
func selfSigned(t testing.TB, host string) (certPEM, keyPEM []byte) {
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

// setupSubmitter creates the submission's service account with only the
// rights spark-submit and prebake need, in every namespace. The
// ClusterRole is made once per cluster; its binding is named after ns
// (give each test its own ns) and goes when t ends.
func (c *testCluster) setupSubmitter(t testing.TB, ns, sa string) {
	t.Helper()
	c.ensureNamespace(t, ns)
	if _, err := c.admin.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.bindClusterRole(t, "spark-submitter", ns, sa, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{"sparkoperator.k8s.io"}, Resources: []string{"sparkapplications"}, Verbs: []string{"get", "create", "delete"}},
	})
}

// bindClusterRole creates the ClusterRole role with rules (unless it is
// there) and binds it to ns/sa in a ClusterRoleBinding role-ns, deleted
// when t ends.
func (c *testCluster) bindClusterRole(t testing.TB, role, ns, sa string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	_, err := c.admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + "-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}}}
	if _, err := c.admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c.shared {
		t.Cleanup(func() {
			if err := c.admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting ClusterRoleBinding %s: %v", binding.Name, err)
			}
		})
	}
}

// ensureNamespace creates ns unless it is there. On the shared cluster,
// the namespace is emptied when t ends (it stays, so that -count=2 finds
// it).
func (c *testCluster) ensureNamespace(t testing.TB, ns string) {
	t.Helper()
	_, err := c.admin.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
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
func (c *testCluster) emptyNamespace(ctx context.Context, ns string) error {
	zero := int64(0)
	all := metav1.ListOptions{}
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	// No controller removes the pvc-protection finalizer here.
	pvcs, err := c.admin.CoreV1().PersistentVolumeClaims(ns).List(ctx, all)
	if err != nil {
		return err
	}
	for _, p := range pvcs.Items {
		if len(p.Finalizers) == 0 {
			continue
		}
		p.Finalizers = nil
		if _, err := c.admin.CoreV1().PersistentVolumeClaims(ns).Update(ctx, &p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	errs := []error{
		c.admin.CoreV1().Pods(ns).DeleteCollection(ctx, now, all),
		c.admin.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, now, all),
		c.admin.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, now, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"}),
		c.admin.CoreV1().Secrets(ns).DeleteCollection(ctx, now, all),
		c.admin.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, now, all),
		c.admin.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, now, all),
	}
	svcs, err := c.admin.CoreV1().Services(ns).List(ctx, all)
	errs = append(errs, err)
	if err == nil {
		for _, s := range svcs.Items {
			if err := c.admin.CoreV1().Services(ns).Delete(ctx, s.Name, now); err != nil && !apierrors.IsNotFound(err) {
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

// boundToken issues a TokenRequest token for sa bound to a new Secret
// secretName; deleting the Secret revokes the token.
func (c *testCluster) boundToken(t testing.TB, ns, sa, secretName string) string {
	t.Helper()
	ctx := context.Background()
	sec, err := c.admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := c.admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: sec.Name, UID: sec.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// waitRevoked waits until the API server rejects token (its token cache
// keeps a revoked token valid for about 10 s).
func (c *testCluster) waitRevoked(t testing.TB, token string) time.Duration {
	t.Helper()
	start := time.Now()
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: c.url, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile}})
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

// writeKubeconfig writes an admin kubeconfig for c.
func (c *testCluster) writeKubeconfig(t testing.TB, path string) {
	t.Helper()
	writeFile(t, path, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: it, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: it, context: {cluster: it, user: admin}}]
current-context: it
`, c.url, c.caFile, c.adminToken))
}

// installSparkOperatorCRD installs a schemaless SparkApplication CRD,
// once per cluster, and waits until it is served; it returns an admin
// dynamic client for it.
func (c *testCluster) installSparkOperatorCRD(t testing.TB) dynamic.NamespaceableResourceInterface {
	t.Helper()
	c.mu.Lock()
	apps := c.apps
	c.mu.Unlock()
	if apps != nil {
		return apps
	}
	cfg := &rest.Config{Host: c.url, BearerToken: c.adminToken, TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile}}
	dyn := dynamic.NewForConfigOrDie(cfg)
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
	apps = dyn.Resource(sparkAppGVR)
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

// testKubelet plays the node: it binds pods to fake-node, sets their status
// and serves their container logs to the API server.
type testKubelet struct {
	c    *testCluster
	srv  *http.Server
	ln   net.Listener
	mu   sync.Mutex
	logs map[string][]logEntry // ns/pod/container
}

type logEntry struct {
	ts   time.Time
	text string
}

// startKubelet returns c's test kubelet (the fake node's), started on the
// first call; it stops with c.
func startKubelet(t testing.TB, c *testCluster) *testKubelet {
	t.Helper()
	c.kubeletMu.Lock()
	defer c.kubeletMu.Unlock()
	if c.kubelet != nil {
		return c.kubelet
	}
	k, err := launchKubelet(c)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.kubelet = k
	c.mu.Unlock()
	return k
}

func launchKubelet(c *testCluster) (*testKubelet, error) {
	certPEM, keyPEM, err := selfSignedPEM("127.0.0.1")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return nil, err
	}
	k := &testKubelet{c: c, ln: ln, logs: map[string][]logEntry{}}
	k.srv = &http.Server{Handler: http.HandlerFunc(k.serveLogs), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = k.srv.Serve(ln) }()
	c.atStop(func() { _ = k.srv.Close() })

	ctx := context.Background()
	node, err := c.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fake-node"}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(ln.Addr().(*net.TCPAddr).Port)
	if _, err := c.admin.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	return k, nil
}

// serveLogs is the kubelet's /containerLogs/{ns}/{pod}/{container}; it honours
// sinceTime, timestamps, tailLines and limitBytes.
func (k *testKubelet) serveLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/containerLogs/") || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	k.mu.Lock()
	entries := append([]logEntry{}, k.logs[strings.Join(parts, "/")]...)
	k.mu.Unlock()
	if s := q.Get("sinceTime"); s != "" {
		since, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var keep []logEntry
		for _, e := range entries {
			if !e.ts.Before(since) {
				keep = append(keep, e)
			}
		}
		entries = keep
	}
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 && n < len(entries) {
		entries = entries[len(entries)-n:]
	}
	var b strings.Builder
	for _, e := range entries {
		if q.Get("timestamps") == "true" {
			b.WriteString(e.ts.UTC().Format(time.RFC3339Nano) + " ")
		}
		b.WriteString(e.text + "\n")
	}
	out := b.String()
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n < len(out) {
		out = out[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(out))
}

// forget drops the logs of ns's pods.
func (k *testKubelet) forget(ns string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key := range k.logs {
		if strings.HasPrefix(key, ns+"/") {
			delete(k.logs, key)
		}
	}
}

func (k *testKubelet) log(ns, pod, container string, lines ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := ns + "/" + pod + "/" + container
	for _, l := range lines {
		k.logs[key] = append(k.logs[key], logEntry{ts: time.Now(), text: l})
	}
}

// waitPod waits for the driver pod in ns (spark-submit creates it) and
// returns its name.
func (k *testKubelet) waitPod(t testing.TB, ns string) string {
	t.Helper()
	for start := time.Now(); time.Since(start) < 60*time.Second; time.Sleep(100 * time.Millisecond) {
		l, err := k.c.admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=driver"})
		if err == nil && len(l.Items) > 0 {
			return l.Items[0].Name
		}
	}
	t.Errorf("no driver pod in %s after 60s", ns)
	return ""
}

// bind schedules the pod on fake-node, as the scheduler does.
func (k *testKubelet) bind(t testing.TB, ns, pod string) {
	t.Helper()
	err := k.c.admin.CoreV1().Pods(ns).Bind(context.Background(), &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: "fake-node"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("binding %s/%s: %v", ns, pod, err)
	}
}

// setStatus updates the pod's status subresource.
func (k *testKubelet) setStatus(t testing.TB, ns, pod string, mutate func(*corev1.PodStatus)) {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; attempt < 5; attempt++ {
		p, err := k.c.admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Errorf("getting %s/%s: %v", ns, pod, err)
			return
		}
		mutate(&p.Status)
		_, err = k.c.admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Errorf("updating status of %s/%s: %v", ns, pod, err)
			return
		}
	}
}

func phaseWith(phase corev1.PodPhase, statuses ...corev1.ContainerStatus) func(*corev1.PodStatus) {
	return func(s *corev1.PodStatus) {
		s.Phase = phase
		for i := range statuses {
			statuses[i].Image = "apache/spark:3.5.3"
			if statuses[i].State.Running != nil {
				statuses[i].State.Running.StartedAt = metav1.Now()
				statuses[i].Started, statuses[i].Ready = ptr(true), true
			}
			if statuses[i].State.Terminated != nil {
				statuses[i].State.Terminated.FinishedAt = metav1.Now()
			}
		}
		s.ContainerStatuses = statuses
	}
}

func ptr[T any](v T) *T { return &v }

// faultProxy sits between prebake and the API server. It injects faults
// into driver-pod GETs by their sequence number and records which bearer
// tokens were used and how they were answered.
type faultProxy struct {
	srv    *http.Server
	url    string
	caFile string
	mu     sync.Mutex
	gets   int
	total  int
	faults map[int]string // GET number (1-based) → "503" | "drop" | "401"
	done   map[string]int // fault kind → times injected
	tokens map[string]map[int]int
	// onWrite, when set, sees the body of every POST, PUT and PATCH.
	onWrite func(method, path string, body []byte)
}

func startFaultProxy(t testing.TB, c *testCluster, faults map[int]string) *faultProxy {
	t.Helper()
	p := &faultProxy{faults: faults, done: map[string]int{}, tokens: map[string]map[int]int{}}
	rp := c.reverseProxy(t)
	rp.ModifyResponse = func(resp *http.Response) error {
		p.record(resp.Request.Header.Get("Authorization"), resp.StatusCode)
		return nil
	}
	var ln net.Listener
	ln, p.url, p.caFile = listenTLS(t)
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.total++
		onWrite := p.onWrite
		p.mu.Unlock()
		if onWrite != nil && (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			onWrite(r.Method, r.URL.Path, body)
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/pods/") && !strings.HasSuffix(r.URL.Path, "/log") {
			p.mu.Lock()
			p.gets++
			fault := p.faults[p.gets]
			if fault != "" {
				p.done[fault]++
			}
			p.mu.Unlock()
			switch fault {
			case "503":
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","reason":"ServiceUnavailable","code":503}`))
				return
			case "401":
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
				return
			case "drop":
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						conn.Close()
						return
					}
				}
			}
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

// reverseProxy is a reverse proxy to the API server (trusting its CA).
func (c *testCluster) reverseProxy(t testing.TB) *httputil.ReverseProxy {
	t.Helper()
	target, _ := url.Parse(c.url)
	ca, err := os.ReadFile(c.caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}
	return rp
}

// listenTLS listens on 127.0.0.1 (HTTP/1.1 over TLS, a fresh self-signed
// certificate); caFile is the certificate, to trust.
func listenTLS(t testing.TB) (ln net.Listener, url, caFile string) {
	t.Helper()
	certPEM, keyPEM := selfSigned(t, "127.0.0.1")
	cert, _ := tls.X509KeyPair(certPEM, keyPEM)
	caFile = filepath.Join(t.TempDir(), "proxy-ca.crt")
	writeFile(t, caFile, string(certPEM))
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return ln, "https://" + ln.Addr().String(), caFile
}

func (p *faultProxy) record(auth string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tok := strings.TrimPrefix(auth, "Bearer ")
	if p.tokens[tok] == nil {
		p.tokens[tok] = map[int]int{}
	}
	p.tokens[tok][status]++
}

// uses returns how often token was answered with each status.
func (p *faultProxy) uses(token string) map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]int{}
	for k, v := range p.tokens[token] {
		out[k] = v
	}
	return out
}

// counts returns the driver-pod GETs and all requests so far.
func (p *faultProxy) counts() (gets, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gets, p.total
}

func (p *faultProxy) injected() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.done {
		out[k] = v
	}
	return out
}

// readLines reads a file of lines (the fake spark-submit's argv).
func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
