package layers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestSilentRegistryIsUnavailable: a registry that accepts connections but
// never answers must not hang `inspect` or `bake image`: each attempt gives
// up after the response timeout and the error is exit 69 (not 75, which
// means the user's --timeout or Ctrl-C), with no credential in it.
func TestSilentRegistryIsUnavailable(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	const password = "REGPASSW0RD"
	ref := strings.TrimPrefix(srv.URL, "http://") + "/spark/app:tag"
	start := time.Now()
	_, err := Inspect(context.Background(), ref, WithBasicAuth("bob", password), WithResponseTimeout(100*time.Millisecond))
	took := time.Since(start)
	if err == nil {
		t.Fatal("Inspect of a silent registry: no error")
	}
	if got := exitcode.Code(err); got != exitcode.Unavailable {
		t.Errorf("exit %d, want %d: %v", got, exitcode.Unavailable, err)
	}
	if hits.Load() < 1 {
		t.Error("the registry saw no request")
	}
	if took > 20*time.Second {
		t.Errorf("took %s; want a few response timeouts and ggcr's back-off", took)
	}
	if msg := err.Error(); !strings.Contains(msg, "no response from registry") || strings.Contains(msg, password) {
		t.Errorf("error %q: want \"no response from registry\" and no password", msg)
	}
}

// TestRefusedRegistryRetried: a refused connection (a registry restarting)
// is retried, and still ends in exit 69 within seconds.
func TestRefusedRegistryRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	start := time.Now()
	_, err := Inspect(context.Background(), addr+"/spark/app:tag")
	took := time.Since(start)
	if got := exitcode.Code(err); got != exitcode.Unavailable {
		t.Errorf("exit %d, want %d: %v", got, exitcode.Unavailable, err)
	}
	if took < time.Second || took > 20*time.Second {
		t.Errorf("took %s; want ggcr's retries (1s, 3s), bounded", took)
	}
}
