// Package pyindex is the tests' counting proxy in front of the machine's
// Python package index, as testenv.CountingProxy is for Maven: it serves
// the simple API (PEP 503 HTML and PEP 691 JSON project pages) and the
// files those pages link to, records every request, and writes a pip.conf
// that points a prebake process at it, so a journey can say that nothing
// but prebake's own resolve asked the index.
//
// The upstream is read from the machine's pip configuration as prebake
// reads it (pypi.LoadIndexConfig): no index host is written here. The
// pages' file links (absolute, often on another host, or relative) are
// rewritten to go through the proxy too; the proxy forwards a file request
// only to a host a page it served linked to, or to an index's own host.
package pyindex

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver/pypi"
)

// Kind says what a request asked for.
type Kind string

const (
	// Page is a project page (or the index root) of the simple API.
	Page Kind = "page"
	// File is a distribution file (a wheel, an sdist, a .metadata file).
	File Kind = "file"
)

// Request is one request that reached the proxy.
type Request struct {
	Kind         Kind
	Method, Path string
	// Upstream is the URL the proxy forwarded it to, without userinfo ("" when refused).
	Upstream string
	// Status is the status the proxy answered.
	Status int
	// RemoteIP is the client's address (a pod's IP, or the host's).
	RemoteIP  string
	UserAgent string
	At        time.Time
}

func (r Request) String() string {
	return fmt.Sprintf("%s %s %s → %d from %s (%s) at %s", r.Kind, r.Method, r.Path, r.Status, r.RemoteIP, r.UserAgent, r.At.Format(time.RFC3339Nano))
}

// Index is a running proxy.
type Index struct {
	// URL is the proxy's main index (the simple API root of the machine's
	// index-url): http://HOST:PORT/index/0/.
	URL string
	// ExtraURLs are the proxies of the machine's extra-index-url, in order.
	ExtraURLs []string
	// Upstream is the machine's configuration the proxy fronts.
	Upstream *pypi.IndexConfig

	base     string
	indexes  []*url.URL // with userinfo, for the requests only
	client   *http.Client
	mu       sync.Mutex
	reqs     []Request
	allowed  map[string]bool // scheme://host a file may be fetched from
	maxBytes int64
}

// Option configures Start.
type Option func(*options)

type options struct {
	addr     string
	upstream *pypi.IndexConfig
	maxPage  int64
}

// Listen makes the proxy listen on addr (host:port; port 0 picks a free
// one) instead of 127.0.0.1:0: e.g. the node's address, where pods would
// reach it if anything there were told to.
func Listen(addr string) Option { return func(o *options) { o.addr = addr } }

// Upstream fronts cfg instead of the machine's pip configuration (tests of
// the proxy itself).
func Upstream(cfg *pypi.IndexConfig) Option { return func(o *options) { o.upstream = cfg } }

// Start reads the machine's pip configuration (skipping t, a failure under
// CI=true, when it names no index: a find-links-only machine has nothing
// to count), starts the proxy
// and closes it at cleanup.
func Start(t testing.TB, opts ...Option) *Index {
	t.Helper()
	o := &options{addr: "127.0.0.1:0", maxPage: 64 << 20}
	for _, f := range opts {
		f(o)
	}
	cfg := o.upstream
	if cfg == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pypi.LoadIndexConfig(ctx)
		if err != nil {
			t.Fatalf("pyindex: the machine's pip configuration: %v", err)
		}
		cfg = c
	}
	if cfg.NoIndex || cfg.IndexURL == "" {
		testenv.Skip(t, fmt.Sprintf("pyindex: the machine's pip configuration (%s) names no index to put a proxy in front of", cfg))
	}
	ix := &Index{Upstream: cfg, allowed: map[string]bool{}, maxBytes: o.maxPage}
	for _, s := range append([]string{cfg.IndexURL}, cfg.ExtraIndexURLs...) {
		u, err := url.Parse(strings.TrimRight(s, "/") + "/")
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("pyindex: index %s is not an absolute http(s) URL", cfg)
		}
		ix.indexes = append(ix.indexes, u)
		ix.allowed[u.Scheme+"://"+u.Host] = true
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.Cert != "" {
		pem, err := os.ReadFile(cfg.Cert)
		if err != nil {
			t.Fatalf("pyindex: the pip configuration's cert: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("pyindex: %s holds no PEM certificate", cfg.Cert)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	ix.client = &http.Client{Transport: tr, Timeout: 5 * time.Minute}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		t.Fatalf("pyindex: listen on %s: %v", o.addr, err)
	}
	srv := &http.Server{Handler: ix, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	ix.base = "http://" + l.Addr().String()
	ix.URL = ix.base + "/index/0/"
	for i := range cfg.ExtraIndexURLs {
		ix.ExtraURLs = append(ix.ExtraURLs, ix.base+"/index/"+strconv.Itoa(i+1)+"/")
	}
	return ix
}

// PipConf writes dir/pip.conf naming the proxy as the only index (the
// extra indexes through it too; no find-links: a wheel must come through
// the proxy) and returns its path.
func (ix *Index) PipConf(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("[global]\nindex-url = " + ix.URL + "\n")
	b.WriteString("extra-index-url = " + strings.Join(ix.ExtraURLs, " ") + "\n")
	b.WriteString("find-links =\nno-index = false\n")
	p := filepath.Join(dir, "pip.conf")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Env is what a process's environment needs (appended last, so it wins)
// to read only the proxy as its index: PIP_CONFIG_FILE=PipConf(dir), and
// the PIP_* variables that would override the file set empty (pip and
// prebake ignore an empty one).
func (ix *Index) Env(t testing.TB, dir string) []string {
	t.Helper()
	return []string{"PIP_CONFIG_FILE=" + ix.PipConf(t, dir), "PIP_INDEX_URL=", "PIP_EXTRA_INDEX_URL=", "PIP_FIND_LINKS=", "PIP_NO_INDEX="}
}

// Count is how many requests reached the proxy so far.
func (ix *Index) Count() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.reqs)
}

// Requests returns the requests so far, oldest first.
func (ix *Index) Requests() []Request {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return append([]Request(nil), ix.reqs...)
}

// Since returns the requests after the first n (n from an earlier Count).
func (ix *Index) Since(n int) []Request {
	all := ix.Requests()
	if n >= len(all) {
		return nil
	}
	return all[n:]
}

// Names are the strings that would reveal the index to a process: the
// proxy's URLs and the upstream's (without userinfo). A pod's environment
// or configuration should hold none of them.
func (ix *Index) Names() []string {
	out := []string{ix.base}
	for _, u := range ix.indexes {
		c := *u
		c.User = nil
		out = append(out, strings.TrimRight(c.String(), "/"), c.Host)
	}
	return out
}

func (ix *Index) record(r *http.Request, k Kind, upstream string, status int) {
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	ix.mu.Lock()
	ix.reqs = append(ix.reqs, Request{Kind: k, Method: r.Method, Path: r.URL.Path, Upstream: upstream, Status: status,
		RemoteIP: ip, UserAgent: r.UserAgent(), At: time.Now()})
	ix.mu.Unlock()
}

// ServeHTTP serves /index/N/... (pages of index N) and
// /files/SCHEME/HOST/PATH (the files the pages link to).
func (ix *Index) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		ix.record(r, Page, "", http.StatusMethodNotAllowed)
		http.Error(w, "pyindex: GET or HEAD only", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/index/"):
		ix.page(w, r)
	case strings.HasPrefix(r.URL.Path, "/files/"):
		ix.file(w, r)
	default:
		ix.record(r, Page, "", http.StatusNotFound)
		http.NotFound(w, r)
	}
}

func (ix *Index) page(w http.ResponseWriter, r *http.Request) {
	n, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/index/"), "/")
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= len(ix.indexes) || dotdot(rest) {
		ix.record(r, Page, "", http.StatusNotFound)
		http.NotFound(w, r)
		return
	}
	up := ix.indexes[i].JoinPath(rest)
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(up.Path, "/") {
		up.Path += "/"
	}
	up.RawQuery = r.URL.RawQuery
	resp, err := ix.forward(r, up)
	if err != nil {
		ix.record(r, Page, redacted(up), http.StatusBadGateway)
		http.Error(w, "pyindex: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, ix.maxBytes+1))
	if err != nil || int64(len(body)) > ix.maxBytes {
		ix.record(r, Page, redacted(up), http.StatusBadGateway)
		http.Error(w, fmt.Sprintf("pyindex: reading %s: %v (or over %d bytes)", redacted(up), err, ix.maxBytes), http.StatusBadGateway)
		return
	}
	if resp.StatusCode == http.StatusOK {
		body, err = ix.rewrite(resp.Request.URL, resp.Header.Get("Content-Type"), body)
		if err != nil {
			ix.record(r, Page, redacted(up), http.StatusBadGateway)
			http.Error(w, "pyindex: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	ix.record(r, Page, redacted(up), resp.StatusCode)
	copyHeaders(w, resp, "Content-Type", "Retry-After")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func (ix *Index) file(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/files/"), "/", 3)
	if len(parts) != 3 || (parts[0] != "http" && parts[0] != "https") || dotdot(parts[2]) {
		ix.record(r, File, "", http.StatusNotFound)
		http.NotFound(w, r)
		return
	}
	origin := parts[0] + "://" + parts[1]
	ix.mu.Lock()
	ok := ix.allowed[origin]
	ix.mu.Unlock()
	if !ok {
		ix.record(r, File, "", http.StatusForbidden)
		http.Error(w, "pyindex: "+origin+" is no host a served page linked to", http.StatusForbidden)
		return
	}
	up, err := url.Parse(origin + "/" + parts[2])
	if err != nil {
		ix.record(r, File, "", http.StatusNotFound)
		http.NotFound(w, r)
		return
	}
	up.RawQuery = r.URL.RawQuery
	resp, err := ix.forward(r, up)
	if err != nil {
		ix.record(r, File, redacted(up), http.StatusBadGateway)
		http.Error(w, "pyindex: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	ix.record(r, File, redacted(up), resp.StatusCode)
	copyHeaders(w, resp, "Content-Type", "Content-Length", "Content-Range", "Accept-Ranges", "Retry-After", "Last-Modified", "ETag")
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodGet {
		_, _ = io.Copy(w, resp.Body)
	}
}

// forward asks upstream u for r, with the index's credentials when u is on
// an index's origin.
func (ix *Index) forward(r *http.Request, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for _, h := range []string{"Accept", "User-Agent", "Range", "If-None-Match", "If-Modified-Since"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	for _, idx := range ix.indexes {
		if idx.User != nil && idx.Scheme == u.Scheme && idx.Host == u.Host {
			p, _ := idx.User.Password()
			req.SetBasicAuth(idx.User.Username(), p)
		}
	}
	resp, err := ix.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", redacted(u), strings.ReplaceAll(err.Error(), u.String(), redacted(u)))
	}
	return resp, nil
}

// hrefRE finds a PEP 503 page's href attributes (double, single or no quotes).
var hrefRE = regexp.MustCompile(`(?i)(\shref\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)`)

// rewrite points every file link of a page (fetched from page) at the
// proxy and allows their hosts.
func (ix *Index) rewrite(page *url.URL, contentType string, body []byte) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if strings.HasSuffix(mt, "+json") || mt == "application/json" {
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, fmt.Errorf("%s: a JSON page that does not parse: %v", redacted(page), err)
		}
		if files, ok := doc["files"].([]any); ok {
			for _, f := range files {
				if m, ok := f.(map[string]any); ok {
					if s, ok := m["url"].(string); ok {
						m["url"] = ix.through(page, s)
					}
				}
			}
		}
		return json.Marshal(doc)
	}
	return hrefRE.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := hrefRE.FindSubmatch(m)
		v := string(sub[2])
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			v = v[1 : len(v)-1]
		}
		return []byte(string(sub[1]) + `"` + html.EscapeString(ix.through(page, html.UnescapeString(v))) + `"`)
	}), nil
}

// through maps a link of page to the proxy's /files/ (the fragment, e.g. a
// #sha256=…, kept); a link that does not parse is left as it is.
func (ix *Index) through(page *url.URL, link string) string {
	ref, err := url.Parse(link)
	if err != nil {
		return link
	}
	u := page.ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" {
		return link
	}
	ix.mu.Lock()
	ix.allowed[u.Scheme+"://"+u.Host] = true
	ix.mu.Unlock()
	out := ix.base + "/files/" + u.Scheme + "/" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out
}

// dotdot reports whether a path has a ".." segment (an escape from the
// upstream's root).
func dotdot(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

func copyHeaders(w http.ResponseWriter, resp *http.Response, names ...string) {
	for _, h := range names {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
}

// redacted is u without userinfo.
func redacted(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
