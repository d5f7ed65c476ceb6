package k8senv

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// FaultProxy sits between prebake and the API server. It injects faults
// into driver-pod GETs by their sequence number and records which bearer
// tokens were used and how they were answered.
type FaultProxy struct {
	// URL is the proxy's (TLS); CAFile its certificate, to trust.
	URL     string
	CAFile  string
	srv     *http.Server
	mu      sync.Mutex
	gets    int
	total   int
	faults  map[int]string // GET number (1-based) → "503" | "drop" | "401"
	done    map[string]int // fault kind → times injected
	tokens  map[string]map[int]int
	onWrite func(method, path string, body []byte) // OnWrite
}

func StartFaultProxy(t testing.TB, c *Cluster, faults map[int]string) *FaultProxy {
	t.Helper()
	p := &FaultProxy{faults: faults, done: map[string]int{}, tokens: map[string]map[int]int{}}
	rp := c.ReverseProxy(t)
	rp.ModifyResponse = func(resp *http.Response) error {
		p.record(resp.Request.Header.Get("Authorization"), resp.StatusCode)
		return nil
	}
	var ln net.Listener
	ln, p.URL, p.CAFile = ListenTLS(t)
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

// ReverseProxy is a reverse proxy to the API server (trusting its CA).
func (c *Cluster) ReverseProxy(t testing.TB) *httputil.ReverseProxy {
	t.Helper()
	target, _ := url.Parse(c.URL)
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}
	return rp
}

// ListenTLS listens on 127.0.0.1 (HTTP/1.1 over TLS, a fresh self-signed
// certificate); caFile is the certificate, to trust.
func ListenTLS(t testing.TB) (ln net.Listener, url, caFile string) {
	t.Helper()
	certPEM, keyPEM := SelfSigned(t, "127.0.0.1")
	cert, _ := tls.X509KeyPair(certPEM, keyPEM)
	caFile = filepath.Join(t.TempDir(), "proxy-ca.crt")
	testenv.WriteFile(t, caFile, string(certPEM))
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return ln, "https://" + ln.Addr().String(), caFile
}

func (p *FaultProxy) record(auth string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tok := strings.TrimPrefix(auth, "Bearer ")
	if p.tokens[tok] == nil {
		p.tokens[tok] = map[int]int{}
	}
	p.tokens[tok][status]++
}

// Uses returns how often token was answered with each status.
func (p *FaultProxy) Uses(token string) map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]int{}
	for k, v := range p.tokens[token] {
		out[k] = v
	}
	return out
}

// Counts returns the driver-pod GETs and all requests so far.
func (p *FaultProxy) Counts() (gets, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gets, p.total
}

func (p *FaultProxy) Injected() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.done {
		out[k] = v
	}
	return out
}

// OnWrite makes f see the body of every POST, PUT and PATCH through p.
func (p *FaultProxy) OnWrite(f func(method, path string, body []byte)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onWrite = f
}
