package testenv

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a reverse proxy in front of one upstream (a Maven repository, an
// S3 server) that records every request it forwards, so that a test can say
// who asked for what, and when.
type Proxy struct {
	// URL is the proxy's base URL (http://HOST:PORT/): a request for
	// URL+"a/b" goes to upstream+"a/b".
	URL string

	mu   sync.Mutex
	reqs []ProxyRequest
}

// ProxyRequest is one request that reached a Proxy.
type ProxyRequest struct {
	Method, Path string
	// RemoteIP is the client's address (a pod's IP, or the host's).
	RemoteIP  string
	UserAgent string
	At        time.Time
}

// ProxyOption configures CountingProxy.
type ProxyOption func(*proxyOptions)

type proxyOptions struct {
	addr         string
	preserveHost bool
	cert         *tls.Certificate
}

// ProxyListen makes the proxy listen on addr (host:port; port 0 picks a
// free one) instead of 127.0.0.1:0: e.g. the node's address, where pods
// reach it.
func ProxyListen(addr string) ProxyOption { return func(o *proxyOptions) { o.addr = addr } }

// ProxyPreserveHost forwards the client's Host header unchanged (an S3
// server checks a signature over the host the client signed for, the
// proxy's); by default the upstream's host is sent.
func ProxyPreserveHost() ProxyOption { return func(o *proxyOptions) { o.preserveHost = true } }

// ProxyTLS makes the proxy serve https with cert (its URL is then https://).
func ProxyTLS(cert tls.Certificate) ProxyOption { return func(o *proxyOptions) { o.cert = &cert } }

// CountingProxy starts a Proxy in front of upstream (a base URL, e.g.
// https://repo1.maven.org/maven2/) and closes it at cleanup.
func CountingProxy(t testing.TB, upstream string, opts ...ProxyOption) *Proxy {
	t.Helper()
	o := &proxyOptions{addr: "127.0.0.1:0"}
	for _, f := range opts {
		f(o)
	}
	target, err := url.Parse(upstream)
	if err != nil || target.Scheme == "" || target.Host == "" {
		t.Fatalf("CountingProxy: upstream %q is not an absolute URL (%v)", upstream, err)
	}
	p := &Proxy{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			host := r.In.Host
			r.SetURL(target)
			if o.preserveHost {
				r.Out.Host = host
			}
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, _, _ := net.SplitHostPort(r.RemoteAddr)
		p.mu.Lock()
		p.reqs = append(p.reqs, ProxyRequest{Method: r.Method, Path: r.URL.Path, RemoteIP: ip, UserAgent: r.UserAgent(), At: time.Now()})
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		t.Fatalf("CountingProxy: listen on %s: %v", o.addr, err)
	}
	scheme := "http"
	if o.cert != nil {
		l, scheme = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{*o.cert}, MinVersion: tls.VersionTLS12}), "https"
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	p.URL = scheme + "://" + l.Addr().String() + "/"
	return p
}

// Count is how many requests reached the proxy so far.
func (p *Proxy) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}

// Requests returns the requests so far, oldest first.
func (p *Proxy) Requests() []ProxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxyRequest(nil), p.reqs...)
}
