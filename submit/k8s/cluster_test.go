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
)

// testCluster is a running etcd + kube-apiserver on 127.0.0.1.
type testCluster struct {
	dir        string
	url        string
	caFile     string
	adminToken string
	admin      kubernetes.Interface
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

// startCluster starts etcd and kube-apiserver; they stop in t.Cleanup
// (kube-apiserver first).
func startCluster(t testing.TB) *testCluster {
	t.Helper()
	etcdBin, apiBin := k8sBinary(t, "etcd"), k8sBinary(t, "kube-apiserver")
	dir := t.TempDir()
	c := &testCluster{dir: dir, adminToken: randHex(16)}
	certPEM, keyPEM := selfSigned(t, "127.0.0.1")
	c.caFile = filepath.Join(dir, "serving.crt")
	writeFile(t, c.caFile, string(certPEM))
	writeFile(t, filepath.Join(dir, "serving.key"), string(keyPEM))
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	writeFile(t, filepath.Join(dir, "sa.key"), string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})))
	writeFile(t, filepath.Join(dir, "sa.pub"), string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})))
	writeFile(t, filepath.Join(dir, "tokens.csv"), c.adminToken+`,prebake-admin,1001,"system:masters"`+"\n")

	clientPort, peerPort, metricsPort, apiPort := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	etcd := startProc(t, dir, "etcd", etcdBin,
		"--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL, "--listen-metrics-urls", fmt.Sprintf("http://127.0.0.1:%d", metricsPort),
		"--unsafe-no-fsync", "--log-level", "warn")
	c.url = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	api := startProc(t, dir, "kube-apiserver", apiBin,
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(apiPort),
		"--tls-cert-file="+filepath.Join(dir, "serving.crt"), "--tls-private-key-file="+filepath.Join(dir, "serving.key"),
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"), "--anonymous-auth=false", "--authorization-mode=RBAC",
		"--service-account-issuer="+c.url, "--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"), "--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount", "--enable-priority-and-fairness=false", "--v=0")
	t.Cleanup(func() {
		stopProc(t, api)
		stopProc(t, etcd)
	})
	// No client-side throttling (5 QPS by default): the test kubelets poll.
	cfg := &rest.Config{Host: c.url, BearerToken: c.adminToken, TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile}, QPS: 200, Burst: 400}
	c.admin = kubernetes.NewForConfigOrDie(cfg)
	deadline := time.Now().Add(90 * time.Second)
	for {
		body, err := c.admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver not ready after 90s: %v\n%s", err, tailFile(filepath.Join(dir, "kube-apiserver.log"), 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The default service account controller does not run here.
	return c
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

func stopProc(t testing.TB, cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Logf("%s ignored SIGTERM; killing it", cmd.Path)
		_ = cmd.Process.Kill()
		<-done
	}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	return strings.Join(lastLines(b, n), "\n")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// selfSigned makes a serving certificate for host, usable as its own CA.
func selfSigned(t testing.TB, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
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
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// setupSubmitter creates the submission's service account with only the
// rights spark-submit and prebake need, in every namespace.
func (c *testCluster) setupSubmitter(t testing.TB, ns, sa string) {
	t.Helper()
	ctx := context.Background()
	c.ensureNamespace(t, ns)
	if _, err := c.admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "spark-submitter"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{"sparkoperator.k8s.io"}, Resources: []string{"sparkapplications"}, Verbs: []string{"get", "create", "delete"}},
	}}
	if _, err := c.admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "spark-submitter"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "spark-submitter"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}}}
	if _, err := c.admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (c *testCluster) ensureNamespace(t testing.TB, ns string) {
	t.Helper()
	_, err := c.admin.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
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

// installSparkOperatorCRD installs a schemaless SparkApplication CRD and
// waits until it is served; it returns an admin dynamic client for it.
func (c *testCluster) installSparkOperatorCRD(t testing.TB) dynamic.NamespaceableResourceInterface {
	t.Helper()
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
	if _, err := dyn.Resource(crdGVR).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apps := dyn.Resource(sparkAppGVR)
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		_, err := apps.Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err == nil {
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

func startKubelet(t testing.TB, c *testCluster) *testKubelet {
	t.Helper()
	certPEM, keyPEM := selfSigned(t, "127.0.0.1")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	k := &testKubelet{c: c, ln: ln, logs: map[string][]logEntry{}}
	k.srv = &http.Server{Handler: http.HandlerFunc(k.serveLogs), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = k.srv.Serve(ln) }()
	t.Cleanup(func() { _ = k.srv.Close() })

	ctx := context.Background()
	node, err := c.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fake-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(ln.Addr().(*net.TCPAddr).Port)
	if _, err := c.admin.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return k
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
