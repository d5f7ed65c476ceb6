package layers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

// TestSilentRegistryIsUnavailable: a registry that accepts connections but
// never answers must not hang `inspect` or `bake image`: each attempt gives
// up after the response timeout and the error is errdefs.Unavailable (not Timeout, which
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
	if got := errdefs.KindOf(err); got != errdefs.Unavailable {
		t.Errorf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
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
// is retried, and still ends Unavailable within seconds.
func TestRefusedRegistryRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	start := time.Now()
	_, err := Inspect(context.Background(), addr+"/spark/app:tag")
	took := time.Since(start)
	if got := errdefs.KindOf(err); got != errdefs.Unavailable {
		t.Errorf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
	}
	if took < time.Second || took > 20*time.Second {
		t.Errorf("took %s; want ggcr's retries (1s, 3s), bounded", took)
	}
}

// TestSlowManifestIsUnavailable (audit 3, N5): a proxy in front of an
// in-process registry answers the manifest GET at once but trickles its
// body, 1 byte every 2s. Each attempt fails at the minimum rate (scaled
// down from 1 KiB/s over 30s) inside the transport, ggcr retries it, and
// Inspect ends with 69 within attempts × the bound plus ggcr's back-off.
func TestSlowManifestIsUnavailable(t *testing.T) {
	regHost := registrytest.InProcess(t)
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(regHost + "/team/base:3.5.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse("http://" + regHost)
	rp := httputil.NewSingleHostReverseProxy(target)
	var manifests atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/manifests/") || r.Method != http.MethodGet {
			rp.ServeHTTP(w, r)
			return
		}
		manifests.Add(1)
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Content-Length", "100000")
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
	defer proxy.Close()
	start := time.Now()
	_, err = Inspect(context.Background(), strings.TrimPrefix(proxy.URL, "http://")+"/team/base:3.5.0",
		withSlowLimits(time.Minute, 1024, 500*time.Millisecond))
	took := time.Since(start)
	if got := errdefs.KindOf(err); got != errdefs.Unavailable {
		t.Fatalf("kind %v, want %v: %v", got, errdefs.Unavailable, err)
	}
	if !strings.Contains(err.Error(), "too slow") {
		t.Errorf("error %q: want \"too slow\"", err)
	}
	if n := manifests.Load(); n < 2 {
		t.Errorf("%d manifest GETs, want retries", n)
	}
	t.Logf("%d manifest GETs in %s: %v", manifests.Load(), took, err)
	// 3 attempts × 0.5s, and ggcr's back-off of 1s then 3s.
	if took > 15*time.Second {
		t.Errorf("took %s", took)
	}
}
