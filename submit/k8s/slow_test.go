package k8s

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
)

// TestSlowAPIServerIsUnavailable (audit 3, N5): an API server that answers
// GET pod at once but trickles the body, 1 byte every 2s. Each poll fails
// at the API call timeout (30s, scaled down), its body included; the polls
// are retried for the API retry time (5 min, scaled down), then 69.
func TestSlowAPIServerIsUnavailable(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/namespaces/team/pods/drv") {
			http.NotFound(w, r)
			return
		}
		gets.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "10000")
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}
	}))
	defer srv.Close()
	o := options{pollInterval: 50 * time.Millisecond, apiCallTimeout: 300 * time.Millisecond, apiRetryTimeout: 1500 * time.Millisecond,
		environ: mapEnv(map[string]string{"HOME": t.TempDir()}), inClusterDir: t.TempDir()}
	args := []string{"--master", "k8s://" + srv.URL, "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.namespace=team", "--class", "org.example.Main", "local:///opt/app.jar"}
	start := time.Now()
	_, err := attachWith(t.Context(), "team:drv", mustLoad(t, args, o.environ), use(o))
	took := time.Since(start)
	t.Logf("%d GETs in %s: %v", gets.Load(), took, err)
	if got := errdefs.KindOf(err); got != errdefs.Unavailable {
		t.Fatalf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
	}
	if n := gets.Load(); n < 3 {
		t.Errorf("%d GETs, want the polls retried", n)
	}
	if took > 5*time.Second {
		t.Errorf("took %s, want about the API retry time and one call timeout", took)
	}
}
