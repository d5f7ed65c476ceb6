package k8s

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authv1 "k8s.io/api/authorization/v1"
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
