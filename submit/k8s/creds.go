package k8s

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/redact"
)

// Spark's submission credential keys (SparkKubernetesClientFactory,
// prefix spark.kubernetes.authenticate.submission).
const (
	confOAuthToken     = "spark.kubernetes.authenticate.submission.oauthToken"
	confOAuthTokenFile = "spark.kubernetes.authenticate.submission.oauthTokenFile"
	confCACertFile     = "spark.kubernetes.authenticate.submission.caCertFile"
	confClientCertFile = "spark.kubernetes.authenticate.submission.clientCertFile"
	confClientKeyFile  = "spark.kubernetes.authenticate.submission.clientKeyFile"
	confContext        = "spark.kubernetes.context"
)

// DefaultInClusterDir is where a pod's own service-account token and CA live.
const DefaultInClusterDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// errCredentials marks a failure to read the submission's credentials; it is
// reported like a 401.
var errCredentials = errors.New("credentials unavailable")

// Bounds of the local credential files: a token, a certificate or a key
// (1 MiB), a kubeconfig (16 MiB). Each must be a regular file.
const (
	maxCredFileSize   = 1 << 20
	maxKubeconfigSize = 16 << 20
)

// checkCredFile fails (naming key and the file) when path is not a regular
// file of at most limit bytes, before client-go reads it: a FIFO would
// hang it, /dev/zero exhaust its memory.
func checkCredFile(key, path string, limit int64) error {
	rc, err := localfile.Open(path, limit)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errCredentials, key, err)
	}
	return rc.Close()
}

// checkKubeconfigs checks each kubeconfig file before clientcmd reads it.
func checkKubeconfigs(paths []string) error {
	for _, p := range paths {
		if err := checkCredFile("kubeconfig", p, maxKubeconfigSize); err != nil {
			return err
		}
	}
	return nil
}

// credsKind is the kind of an error reading the credentials: a local file
// that is missing or is no regular file of its size is bad input (NotFound,
// Invalid), anything else is reported like a 401.
func credsKind(err error) errdefs.Kind {
	if k := errdefs.KindOf(err); k == errdefs.Invalid || k == errdefs.NotFound {
		return k
	}
	return errdefs.Denied
}

// k8sCreds are the credentials a submission was given, in spark-submit's
// order: the master URL; the explicit submission token, token file and
// client certificate; else spark.kubernetes.context with $KUBECONFIG; else the
// in-cluster service account. Config re-reads them on every call, and a token
// file is read again for every request, because projected tokens rotate.
//
// The invariant: when an explicit token or client certificate is given, no
// other credential (kubeconfig user, in-cluster service-account token) is
// ever used, not even after a 401.
type k8sCreds struct {
	host      string // API server URL from the master
	token     string
	tokenFile string
	caFile    string
	certFile  string
	keyFile   string
	context   string // spark.kubernetes.context
	getenv    func(string) string
	saDir     string // in-cluster service-account directory
}

// newK8sCreds takes the credentials from the master URL and the Spark conf.
func newK8sCreds(master string, conf map[string]string, getenv func(string) string, saDir string) (*k8sCreds, error) {
	host, err := apiServerURL(master)
	if err != nil {
		return nil, err
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if saDir == "" {
		saDir = DefaultInClusterDir
	}
	c := &k8sCreds{
		host:      host,
		token:     conf[confOAuthToken],
		tokenFile: conf[confOAuthTokenFile],
		caFile:    conf[confCACertFile],
		certFile:  conf[confClientCertFile],
		keyFile:   conf[confClientKeyFile],
		context:   conf[confContext],
		getenv:    getenv,
		saDir:     saDir,
	}
	if c.token != "" && c.tokenFile != "" {
		return nil, fmt.Errorf("both %s and %s are set: Spark refuses this, give one", confOAuthToken, confOAuthTokenFile)
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return nil, fmt.Errorf("%s and %s go together", confClientCertFile, confClientKeyFile)
	}
	return c, nil
}

// newCreds is newK8sCreds with o's environment (a bad combination is
// errdefs.BadArgument); it warns on o's stderr when the submission's token
// goes to an http:// API server.
func (o *options) newCreds(master string, conf map[string]string) (*k8sCreds, error) {
	c, err := newK8sCreds(master, conf, o.getenv, o.inClusterDir)
	if err != nil {
		return nil, errdefs.New(errdefs.BadArgument, err)
	}
	if w := c.plainHTTPWarning(); w != "" {
		fmt.Fprintf(o.stderr, "prebake: warning: %s\n", w)
	}
	return c, nil
}

// apiServerURL turns a k8s:// master into the API server URL, as
// KubernetesUtils.parseMasterUrl does: https is the default scheme.
func apiServerURL(master string) (string, error) {
	rest, ok := strings.CutPrefix(master, "k8s://")
	if !ok || rest == "" {
		return "", fmt.Errorf("master %q: expected k8s://[https://]host[:port]", master)
	}
	if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") {
		rest = "https://" + rest
	}
	return rest, nil
}

// plainHTTP reports an http:// API server URL: no TLS, so no client
// certificate, and a token travels in clear text.
func (c *k8sCreds) plainHTTP() bool { return strings.HasPrefix(strings.ToLower(c.host), "http://") }

// sendsToken reports whether the submission has its own token to send.
func (c *k8sCreds) sendsToken() bool { return c.token != "" || c.tokenFile != "" }

// plainHTTPWarning is what to warn when the submission's own token goes to
// an http:// API server in clear text; "" otherwise.
func (c *k8sCreds) plainHTTPWarning() string {
	if !c.plainHTTP() || !c.sendsToken() {
		return ""
	}
	return fmt.Sprintf("the submission's token (%s) is sent to %s in clear text: anyone on the network path can read it; give an https:// API server", c.Source(), redact.URL(c.host))
}

// unsentOverHTTP explains, for an http:// API server, that none of the
// credentials were sent: a kubeconfig's, the pod's service account and
// client certificates go only over TLS. "" when a token was sent or there
// are no credentials (or no k8sCreds: a client given by a test).
func (c *k8sCreds) unsentOverHTTP() string {
	if c == nil || !c.plainHTTP() || c.sendsToken() {
		return ""
	}
	src := c.Source()
	if src == noCredentials {
		return ""
	}
	return fmt.Sprintf("no credentials were sent: %s is plain http, and the credentials of %s are sent only to an https:// API server", redact.URL(c.host), src)
}

// explainAuth adds unsentOverHTTP to a 401/403 answer.
func (c *k8sCreds) explainAuth(err error) error {
	if !isAuthError(err) {
		return err
	}
	if why := c.unsentOverHTTP(); why != "" {
		return fmt.Errorf("%w (%s)", err, why)
	}
	return err
}

// noCredentials is Source without any.
const noCredentials = "no credentials (anonymous)"

// explicit reports whether the submission was given its own credentials.
func (c *k8sCreds) explicit() bool {
	return c.token != "" || c.tokenFile != "" || c.certFile != ""
}

// Source names where the credentials come from, for errors. It never holds a
// secret.
func (c *k8sCreds) Source() string {
	var s []string
	switch {
	case c.tokenFile != "":
		s = append(s, confOAuthTokenFile+" "+c.tokenFile)
	case c.token != "":
		s = append(s, confOAuthToken+" (value not shown)")
	}
	if c.certFile != "" {
		s = append(s, confClientCertFile+" "+c.certFile)
	}
	if len(s) > 0 {
		return strings.Join(s, " and ")
	}
	if kc := c.kubeconfigPaths(); len(kc) > 0 {
		ctx := c.context
		if ctx == "" {
			ctx = "(current context)"
		}
		return fmt.Sprintf("kubeconfig %s context %s", strings.Join(kc, string(filepath.ListSeparator)), ctx)
	}
	if c.inCluster() {
		return "in-cluster service account " + c.saDir
	}
	return noCredentials
}

// kubeconfigPaths are the kubeconfig files that exist: $KUBECONFIG, else
// ~/.kube/config.
func (c *k8sCreds) kubeconfigPaths() []string {
	var cand []string
	if kc := c.getenv("KUBECONFIG"); kc != "" {
		cand = filepath.SplitList(kc)
	} else if home := c.getenv("HOME"); home != "" {
		cand = []string{filepath.Join(home, ".kube", "config")}
	}
	var out []string
	for _, p := range cand {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func (c *k8sCreds) inCluster() bool {
	if c.getenv("KUBERNETES_SERVICE_HOST") == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(c.saDir, "token"))
	return err == nil
}

// Namespace is the kubeconfig context's namespace, or the in-cluster one, or
// "default"; status and kill use it when the ID has none.
func (c *k8sCreds) Namespace() string {
	if kc := c.kubeconfigPaths(); len(kc) > 0 && checkKubeconfigs(kc) == nil {
		if ns, _, err := c.kubeconfig(kc).Namespace(); err == nil && ns != "" {
			return ns
		}
	}
	if c.inCluster() {
		if b, err := localfile.Read(filepath.Join(c.saDir, "namespace"), maxCredFileSize); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	return "default"
}

func (c *k8sCreds) kubeconfig(paths []string) clientcmd.ClientConfig {
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: paths}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.context})
}

// base is the configuration the explicit credentials are layered on: the
// kubeconfig context, else the in-cluster config, else none.
func (c *k8sCreds) base() (*rest.Config, error) {
	if kc := c.kubeconfigPaths(); len(kc) > 0 {
		if err := checkKubeconfigs(kc); err != nil {
			return nil, err
		}
		cfg, err := c.kubeconfig(kc).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("%w: loading kubeconfig %s: %w", errCredentials, strings.Join(kc, ":"), err)
		}
		return cfg, nil
	}
	if c.context != "" {
		return nil, fmt.Errorf("%w: %s=%s but no kubeconfig found ($KUBECONFIG, ~/.kube/config)", errCredentials, confContext, c.context)
	}
	if c.inCluster() {
		cfg := &rest.Config{BearerTokenFile: filepath.Join(c.saDir, "token")}
		if ca := filepath.Join(c.saDir, "ca.crt"); fileExists(ca) {
			cfg.CAFile = ca
		}
		return cfg, nil
	}
	return &rest.Config{}, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Config builds a client configuration from the credentials, reading them
// afresh.
func (c *k8sCreds) Config() (*rest.Config, error) {
	base, err := c.base()
	if err != nil && !c.explicit() {
		return nil, err
	}
	if base == nil {
		base = &rest.Config{}
	}
	cfg := &rest.Config{Host: c.host, UserAgent: "prebake"}
	// Trust: the explicit CA, else the base's.
	cfg.TLSClientConfig = rest.TLSClientConfig{
		Insecure:   base.Insecure,
		ServerName: base.ServerName,
		CAFile:     base.CAFile,
		CAData:     base.CAData,
	}
	if c.caFile != "" {
		cfg.CAFile, cfg.CAData, cfg.Insecure = c.caFile, nil, false
	}
	tokenFile := ""
	switch {
	case c.explicit():
		// Only the submission's own credentials; nothing from the base.
		cfg.BearerToken = c.token
		tokenFile = c.tokenFile
		cfg.CertFile, cfg.KeyFile = c.certFile, c.keyFile
	case c.plainHTTP():
		// A kubeconfig's or the pod's credentials go only to an https://
		// server, as client-go sends a kubeconfig user's (unsentOverHTTP
		// says so when the server refuses the request).
	default:
		cfg.BearerToken = base.BearerToken
		tokenFile = base.BearerTokenFile
		cfg.Username, cfg.Password = base.Username, base.Password
		cfg.CertFile, cfg.CertData = base.CertFile, base.CertData
		cfg.KeyFile, cfg.KeyData = base.KeyFile, base.KeyData
		cfg.ExecProvider, cfg.AuthProvider = base.ExecProvider, base.AuthProvider
		cfg.Impersonate = base.Impersonate
	}
	redact.AddSecret(cfg.BearerToken) // masked by value wherever a server echoes it
	redact.AddSecret(cfg.Password)
	// The files client-go reads, wherever they were named (the conf, the
	// kubeconfig, the service account): regular files under the cap.
	for _, f := range []struct {
		key, path string
		fromConf  bool
	}{
		{confCACertFile, cfg.CAFile, c.caFile != ""},
		{confClientCertFile, cfg.CertFile, c.explicit()},
		{confClientKeyFile, cfg.KeyFile, c.explicit()},
	} {
		if f.path == "" {
			continue
		}
		if !f.fromConf {
			f.key = "a CA, certificate or key file of " + c.Source()
		}
		if err := checkCredFile(f.key, f.path, maxCredFileSize); err != nil {
			return nil, err
		}
	}
	if tokenFile != "" {
		if _, err := readToken(tokenFile); err != nil {
			return nil, err
		}
		cfg.BearerToken = ""
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return &tokenFileTransport{path: tokenFile, next: rt}
		}
	}
	return cfg, nil
}

func readToken(path string) (string, error) {
	b, err := localfile.Read(path, maxCredFileSize)
	if err != nil {
		return "", fmt.Errorf("%w: reading token file: %w", errCredentials, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%w: token file %s is empty", errCredentials, path)
	}
	return tok, nil
}

// tokenFileTransport sets the bearer token read from path on every request.
// client-go's own file token source caches for a minute; projected tokens
// may rotate sooner.
type tokenFileTransport struct {
	path string
	next http.RoundTripper
}

func (t *tokenFileTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := readToken(t.path)
	if err != nil {
		return nil, err
	}
	redact.AddSecret(tok)
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return t.next.RoundTrip(r)
}

// WrappedRoundTripper lets client-go's debugging wrappers see through.
func (t *tokenFileTransport) WrappedRoundTripper() http.RoundTripper { return t.next }
