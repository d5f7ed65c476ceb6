package k8s

import (
	"errors"
	"github.com/prebake/prebake/internal/testenv"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// recordRT records the Authorization header of each request.
type recordRT struct{ auth []string }

func (r *recordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}

// fakeInCluster makes a service-account dir with its own token and an
// environment that looks like a pod's.
func fakeInCluster(t *testing.T) (string, func(string) string) {
	dir := filepath.Join(t.TempDir(), "sa")
	testenv.WriteFile(t, filepath.Join(dir, "token"), "pod-own-sa-token")
	testenv.WriteFile(t, filepath.Join(dir, "namespace"), "pod-ns")
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	return dir, func(k string) string { return env[k] }
}

func TestCredsTokenFileReadPerRequest(t *testing.T) {
	saDir, getenv := fakeInCluster(t)
	tok := filepath.Join(t.TempDir(), "token")
	testenv.WriteFile(t, tok, "token-one\n")
	c, err := newK8sCreds("k8s://https://api:6443", map[string]string{confOAuthTokenFile: tok}, getenv, saDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://api:6443" || cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.WrapTransport == nil {
		t.Fatalf("config: host %q token set %v file %q wrap %v", cfg.Host, cfg.BearerToken != "", cfg.BearerTokenFile, cfg.WrapTransport != nil)
	}
	rec := &recordRT{}
	rt := cfg.WrapTransport(rec)
	req, _ := http.NewRequest("GET", "https://api:6443/api", nil)
	for _, next := range []string{"token-two", ""} {
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, tok, next)
	}
	if got := strings.Join(rec.auth, ","); got != "Bearer token-one,Bearer token-two" {
		t.Errorf("Authorization per request = %q", got)
	}
	// The file is now empty: a credential error, never a fallback.
	if _, err := rt.RoundTrip(req); !errors.Is(err, errCredentials) {
		t.Errorf("empty token file: err = %v, want errCredentials", err)
	}
	if strings.Contains(strings.Join(rec.auth, ","), "pod-own-sa-token") {
		t.Error("the pod's own service-account token was used")
	}
	if src := c.Source(); !strings.Contains(src, tok) || !strings.Contains(src, "oauthTokenFile") {
		t.Errorf("Source() = %q", src)
	}
}

func TestCredsExplicitTokenNeverReplaced(t *testing.T) {
	saDir, getenv := fakeInCluster(t)
	c, err := newK8sCreds("k8s://api:6443", map[string]string{confOAuthToken: "explicit"}, getenv, saDir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second call is the re-read after a 401
		cfg, err := c.Config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.BearerToken != "explicit" || cfg.BearerTokenFile != "" || cfg.WrapTransport != nil || cfg.Host != "https://api:6443" {
			t.Fatalf("config %d: token %q file %q wrap %v host %q", i, cfg.BearerToken, cfg.BearerTokenFile, cfg.WrapTransport != nil, cfg.Host)
		}
	}
	if strings.Contains(c.Source(), "explicit") {
		t.Errorf("Source() shows the token: %q", c.Source())
	}
}

func TestCredsInClusterFallback(t *testing.T) {
	saDir, getenv := fakeInCluster(t)
	c, err := newK8sCreds("k8s://https://api:6443", nil, getenv, saDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.Config()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordRT{}
	req, _ := http.NewRequest("GET", "https://api:6443/api", nil)
	if _, err := cfg.WrapTransport(rec).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if rec.auth[0] != "Bearer pod-own-sa-token" {
		t.Errorf("in-cluster auth = %q", rec.auth[0])
	}
	if c.Namespace() != "pod-ns" || !strings.HasPrefix(c.Source(), "in-cluster") {
		t.Errorf("namespace %q source %q", c.Namespace(), c.Source())
	}
}

func TestCredsKubeconfigContext(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	testenv.WriteFile(t, kc, `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c
  cluster: {server: "https://elsewhere:1", insecure-skip-tls-verify: true}
users:
- name: ua
  user: {token: token-a}
- name: ub
  user: {token: token-b}
contexts:
- name: a
  context: {cluster: c, user: ua, namespace: ns-a}
- name: b
  context: {cluster: c, user: ub, namespace: ns-b}
`)
	saDir, inCluster := fakeInCluster(t)
	getenv := func(k string) string {
		if k == "KUBECONFIG" {
			return kc
		}
		return inCluster(k)
	}
	c, err := newK8sCreds("k8s://https://api:6443", map[string]string{confContext: "b"}, getenv, saDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "token-b" || cfg.Host != "https://api:6443" || !cfg.Insecure {
		t.Errorf("token %q host %q insecure %v", cfg.BearerToken, cfg.Host, cfg.Insecure)
	}
	if c.Namespace() != "ns-b" || !strings.Contains(c.Source(), "context b") {
		t.Errorf("namespace %q source %q", c.Namespace(), c.Source())
	}
	// An explicit token wins over the kubeconfig user and keeps its trust.
	c, _ = newK8sCreds("k8s://https://api:6443", map[string]string{confContext: "b", confOAuthToken: "mine"}, getenv, saDir)
	cfg, err = c.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "mine" || !cfg.Insecure {
		t.Errorf("explicit over kubeconfig: token %q insecure %v", cfg.BearerToken, cfg.Insecure)
	}
}

func TestCredsConflicts(t *testing.T) {
	for _, conf := range []map[string]string{
		{confOAuthToken: "a", confOAuthTokenFile: "/f"},
		{confClientCertFile: "/c"},
	} {
		if _, err := newK8sCreds("k8s://h", conf, nil, ""); err == nil {
			t.Errorf("%v: want an error", conf)
		}
	}
}
