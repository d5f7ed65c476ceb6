package s3store

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
)

// TestNoAnswerIsUnavailable: an endpoint that accepts connections but never
// answers must not hang the command. Each attempt gives up after the
// response timeout, is retried, and the error is errdefs.Unavailable (not Timeout, which
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
	if got := errdefs.KindOf(err); got != errdefs.Unavailable {
		t.Errorf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
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

// TestSlowManifestIsUnavailable (audit 3, N5): an endpoint that answers the
// manifest GET at once but trickles its body (1 byte every 2s of 1,000)
// fails each attempt at the minimum rate (scaled down from 1 KiB/s over
// 30s), or at the deadline when it trickles faster; the SDK retries it and
// the error is 69, in about attempts × the bound.
func TestSlowManifestIsUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		gap  time.Duration
		opt  Option
		want string
	}{
		{"under the minimum rate", 2 * time.Second, withSlowLimits(time.Minute, 1024, 400*time.Millisecond), "too slow"},
		{"past the deadline", 10 * time.Millisecond, withSlowLimits(600*time.Millisecond, 10, 200*time.Millisecond), "did not send the whole response within 600ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Content-Length", "1000")
				w.WriteHeader(http.StatusOK)
				for range 1000 {
					if _, err := w.Write([]byte(" ")); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(tc.gap):
					}
				}
			}))
			defer srv.Close()
			st, err := Open(context.Background(), "s3://bkt/pfx",
				WithEndpoint(srv.URL), WithPathStyle(true), WithRegion("us-east-1"),
				WithStaticCredentials("AKIAEXAMPLE", "AWSS3CRETVALUE"),
				WithRetry(3, 10*time.Millisecond), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = st.Manifest(context.Background(), strings.Repeat("a", 64))
			took := time.Since(start)
			if got := errdefs.KindOf(err); got != errdefs.Unavailable {
				t.Fatalf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want %q", err, tc.want)
			}
			if got := hits.Load(); got != 3 {
				t.Errorf("%d attempts, want 3 (retried)", got)
			}
			if took > 5*time.Second {
				t.Errorf("took %s; want about 3 × the bound", took)
			}
		})
	}
}

// TestRedirectToOtherPortNotFollowed (N7): a GET answered with a 307 to
// another port of the same host is not followed: the SigV4 Authorization
// (access key id, signature) never reaches the other server.
func TestRedirectToOtherPortNotFollowed(t *testing.T) {
	var other atomic.Int32
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer a.Close()
	st, err := Open(context.Background(), "s3://bkt/pfx",
		WithEndpoint(a.URL), WithPathStyle(true), WithRegion("us-east-1"),
		WithStaticCredentials("AKIAEXAMPLE", "AWSS3CRETVALUE"), WithRetry(1, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Manifest(context.Background(), strings.Repeat("a", 64))
	if err == nil {
		t.Fatal("Manifest through a redirect: no error")
	}
	if n := other.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
	if got := errdefs.KindOf(err); got != errdefs.Unavailable {
		t.Errorf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
	}
}
