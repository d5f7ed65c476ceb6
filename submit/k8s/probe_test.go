package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	authv1 "k8s.io/api/authorization/v1"

	"github.com/prebake/prebake/errdefs"
)

// fakeAPIServer answers GET /version and SelfSubjectAccessReviews: allowed
// unless the resource and verb are in deny ("create services").
func fakeAPIServer(t *testing.T, deny map[string]bool) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/version":
			w.Write([]byte(`{"major":"1","minor":"31","gitVersion":"v1.31.0"}`))
		case r.Method == http.MethodPost && r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
			var rv authv1.SelfSubjectAccessReview
			if err := json.NewDecoder(r.Body).Decode(&rv); err != nil || rv.Spec.ResourceAttributes == nil {
				t.Logf("bad review %s %v", r.Header.Get("Content-Type"), err)
				http.Error(w, "bad review", http.StatusBadRequest)
				return
			}
			a := rv.Spec.ResourceAttributes
			rv.Status.Allowed = !deny[a.Verb+" "+a.Resource] && a.Namespace == "spark-jobs"
			if !rv.Status.Allowed {
				rv.Status.Reason = "no RBAC rule"
			}
			rv.APIVersion, rv.Kind = "authorization.k8s.io/v1", "SelfSubjectAccessReview"
			json.NewEncoder(w).Encode(rv)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestProbeAPIServer(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	s := fakeAPIServer(t, map[string]bool{"create services": true, "patch configmaps": true})
	conf := map[string]string{confOAuthToken: "t0ken", "spark.kubernetes.namespace": "spark-jobs"}
	p, err := ProbeAPIServer(context.Background(), "k8s://"+s.URL, conf, SubmitNeeds, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	for _, a := range p.Access {
		if !a.Allowed {
			denied = append(denied, a.Verb+" "+a.Resource)
		}
	}
	type got struct {
		Reachable bool
		Version   string
		Namespace string
		Checked   int
		Denied    []string
		Error     string
	}
	want := got{true, "v1.31.0", "spark-jobs", len(SubmitNeeds), []string{"create services", "patch configmaps"}, ""}
	if diff := cmp.Diff(want, got{p.Reachable, p.Version, p.Namespace, len(p.Access), denied, p.Error}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if strings.Contains(p.Source+p.Error+p.Warning, "t0ken") {
		t.Errorf("the token is in the probe: %+v", p)
	}

	// Nothing listening: not reachable, an error, no access checked.
	s.Close()
	p, err = ProbeAPIServer(context.Background(), "k8s://"+s.URL, conf, SubmitNeeds, 2*time.Second)
	if err != nil || p.Reachable || p.Error == "" || len(p.Access) != 0 {
		t.Errorf("closed server: %+v, %v", p, err)
	}
	if _, err := ProbeAPIServer(context.Background(), "spark://x:7077", conf, SubmitNeeds, time.Second); err == nil {
		t.Error("a spark:// master: no error")
	}
}

// TestProbeAPIServerFailures: each way the probe stops says of what kind
// it is, as doctor maps it to an exit code: the credentials refused
// (401/403 on /version: reachable, Denied), not loadable (Invalid), no
// answer to an access review (Unavailable); a cancelled ctx is returned.
func TestProbeAPIServerFailures(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	status := func(code int, reason string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d}`, reason, code)
		}
	}
	hangUp := func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelling := func(w http.ResponseWriter, r *http.Request) {
		cancel()
		select { // the probe returns on the cancel, not on this answer
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		http.Error(w, "too late", http.StatusServiceUnavailable)
	}
	version := func(v string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"major":"1","minor":"31","gitVersion":%q}`, v)
		}
	}
	type got struct {
		Reachable bool
		Kind      errdefs.Kind
		Checked   int
		Err       error
	}
	tests := []struct {
		name           string
		version, ssar  http.HandlerFunc
		conf           map[string]string
		ctx            context.Context
		want           got
		wantVersion    string
		wantErrContain string
	}{
		{name: "401 on /version", version: status(401, "Unauthorized"),
			want: got{Reachable: true, Kind: errdefs.Denied}},
		{name: "403 on /version", version: status(403, "Forbidden"),
			want: got{Reachable: true, Kind: errdefs.Denied}},
		{name: "500 on /version", version: status(500, "InternalError"),
			want: got{Kind: errdefs.Unavailable}},
		{name: "credentials not loadable",
			conf: map[string]string{confOAuthTokenFile: "/nonexistent/token", "spark.kubernetes.namespace": "spark-jobs"},
			want: got{Kind: errdefs.Invalid}, wantErrContain: "credentials from"},
		{name: "access review refused", ssar: status(403, "Forbidden"),
			want: got{Reachable: true, Kind: errdefs.Denied}, wantVersion: "v1.31.0", wantErrContain: "access review of create pods"},
		{name: "access review: connection dropped", ssar: hangUp,
			want: got{Reachable: true, Kind: errdefs.Unavailable}, wantVersion: "v1.31.0", wantErrContain: "access review of create pods"},
		{name: "access review: 503", ssar: status(503, "ServiceUnavailable"),
			want: got{Reachable: true, Kind: errdefs.Unavailable}, wantVersion: "v1.31.0"},
		{name: "ctx cancelled during a review", ssar: cancelling, ctx: ctx,
			want: got{Reachable: true, Err: context.Canceled}, wantVersion: "v1.31.0"},
		{name: "the version is redacted", version: version("v1.31.0 token=t0ken"),
			want: got{Reachable: true, Checked: len(SubmitNeeds)}, wantVersion: "v1.31.0 token=***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok := fakeAPIServer(t, nil)
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/version" && tt.version != nil:
					tt.version(w, r)
				case r.URL.Path != "/version" && tt.ssar != nil:
					tt.ssar(w, r)
				default:
					ok.Config.Handler.ServeHTTP(w, r)
				}
			}))
			defer s.Close()
			conf := tt.conf
			if conf == nil {
				conf = map[string]string{confOAuthToken: "t0ken", "spark.kubernetes.namespace": "spark-jobs"}
			}
			c := tt.ctx
			if c == nil {
				c = context.Background()
			}
			p, err := ProbeAPIServer(c, "k8s://"+s.URL, conf, SubmitNeeds, 5*time.Second)
			if p == nil {
				t.Fatalf("no probe: %v", err)
			}
			if diff := cmp.Diff(tt.want, got{p.Reachable, p.Kind, len(p.Access), err}, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("(-want +got):\n%s\nerror: %s", diff, p.Error)
			}
			if tt.wantVersion != "" && !strings.HasPrefix(p.Version, strings.TrimSuffix(tt.wantVersion, "***")) {
				t.Errorf("version %q, want %q", p.Version, tt.wantVersion)
			}
			if !strings.Contains(p.Error, tt.wantErrContain) {
				t.Errorf("error %q, want it to contain %q", p.Error, tt.wantErrContain)
			}
			if strings.Contains(p.Version+p.Error, "t0ken") {
				t.Errorf("the token is in the probe: %+v", p)
			}
		})
	}
}
