package s3store

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

// TestNoAnswerIsUnavailable: an endpoint that accepts connections but never
// answers must not hang the command. Each attempt gives up after the
// response timeout, is retried, and the error is exit 69 (not 75, which
// means the user's --timeout or Ctrl-C), with no credential in it.
func TestNoAnswerIsUnavailable(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	const secret = "AWSS3CRETVALUE"
	st, err := Open(context.Background(), "s3://bkt/pfx",
		WithEndpoint(srv.URL), WithPathStyle(true), WithRegion("us-east-1"),
		WithStaticCredentials("AKIAEXAMPLE", secret),
		WithRetry(3, 10*time.Millisecond), WithResponseTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = st.Manifest(context.Background(), strings.Repeat("a", 64))
	took := time.Since(start)
	if err == nil {
		t.Fatal("Manifest from a silent endpoint: no error")
	}
	if got := exitcode.Code(err); got != exitcode.Unavailable {
		t.Errorf("exit %d, want %d: %v", got, exitcode.Unavailable, err)
	}
	if got := hits.Load(); got != 3 {
		t.Errorf("%d attempts, want 3 (retried like a refused connection)", got)
	}
	if took > 5*time.Second {
		t.Errorf("took %s; want about 3 × 100ms", took)
	}
	if msg := err.Error(); !strings.Contains(msg, "no response from") || strings.Contains(msg, secret) {
		t.Errorf("error %q: want \"no response from\" and no secret", msg)
	}
}
