package testenv

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCountingProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Host+" "+r.URL.Path)
	}))
	defer up.Close()
	upHost := strings.TrimPrefix(up.URL, "http://")
	for _, tc := range []struct {
		name     string
		opts     []ProxyOption
		wantHost func(p *Proxy) string
	}{
		{"upstream host", nil, func(*Proxy) string { return upHost }},
		{"preserved host", []ProxyOption{ProxyPreserveHost()}, func(p *Proxy) string {
			return strings.TrimSuffix(strings.TrimPrefix(p.URL, "http://"), "/")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := CountingProxy(t, up.URL+"/maven2/", tc.opts...)
			req, _ := http.NewRequest(http.MethodGet, p.URL+"org/x/x.pom", nil)
			req.Header.Set("User-Agent", "probe/1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if diff := cmp.Diff(tc.wantHost(p)+" /maven2/org/x/x.pom", string(body)); diff != "" {
				t.Errorf("upstream saw (-want +got):\n%s", diff)
			}
			got := p.Requests()
			if p.Count() != 1 || len(got) != 1 || got[0].At.IsZero() {
				t.Fatalf("Count() = %d, Requests() = %+v, want one request", p.Count(), got)
			}
			want := ProxyRequest{Method: "GET", Path: "/org/x/x.pom", RemoteIP: "127.0.0.1", UserAgent: "probe/1", At: got[0].At}
			if diff := cmp.Diff(want, got[0]); diff != "" {
				t.Errorf("recorded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountingProxyBadUpstream(t *testing.T) {
	ft := &fatalT{TB: t}
	func() {
		defer func() { _ = recover() }()
		CountingProxy(ft, "repo1.maven.org/maven2")
	}()
	if !strings.Contains(ft.msg, `upstream "repo1.maven.org/maven2" is not an absolute URL`) {
		t.Errorf("message %q", ft.msg)
	}
}

// fatalT records Fatalf and stops the calling goroutine's function with a
// panic (recovered by the test).
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}

func TestCountingProxyTLS(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer up.Close()
	srv := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate: 127.0.0.1
	defer srv.Close()
	p := CountingProxy(t, up.URL, ProxyTLS(srv.TLS.Certificates[0]))
	if !strings.HasPrefix(p.URL, "https://127.0.0.1:") {
		t.Fatalf("URL %s", p.URL)
	}
	resp, err := srv.Client().Get(p.URL + "x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" || p.Count() != 1 {
		t.Errorf("body %q, count %d", body, p.Count())
	}
}
