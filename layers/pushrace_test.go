package layers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

// blobRaceRegistry is the in-process registry behind a handler that answers
// the first fail manifest PUTs as distribution does while another push of
// the same blob commits (audit 3 N8). With store, the failed PUT reaches the
// registry first (the other push landed the same manifest).
func blobRaceRegistry(t *testing.T, fail int64, store bool) (host string, puts *atomic.Int64) {
	t.Helper()
	reg := registrytest.Handler()
	puts = &atomic.Int64{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			if n := puts.Add(1); n <= fail {
				if store {
					reg.ServeHTTP(httptest.NewRecorder(), r)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match uploaded content"},`+
					`{"code":"MANIFEST_BLOB_UNKNOWN","message":"blob unknown to registry","detail":"sha256:020e8b2c"}]}`)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://"), puts
}

func TestBakePushRace(t *testing.T) {
	saved := pushRaceBackoff
	pushRaceBackoff = time.Millisecond
	t.Cleanup(func() { pushRaceBackoff = saved })
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	for _, tc := range []struct {
		name     string
		fail     int64
		store    bool
		wantKind errdefs.Kind
		wantPuts int64 // manifest PUTs of the single-platform image
	}{
		{"first PUT refused, retried", 1, false, 0, 2},
		{"refused but landed (the other push's manifest)", 1, true, 0, 1},
		{"refused four times", 4, false, 0, 5},
		{"refused every time: unavailable", 1000, false, errdefs.Unavailable, pushRaceAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, puts := blobRaceRegistry(t, tc.fail, tc.store)
			in := BakeInput{Lock: lf, Jars: localJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: host + "/team/race"}
			res, err := Bake(context.Background(), in)
			if got := errdefs.KindOf(err); got != tc.wantKind {
				t.Fatalf("kind %v, want %v: %v", got, tc.wantKind, err)
			}
			if puts.Load() != tc.wantPuts {
				t.Errorf("%d manifest PUTs, want %v", puts.Load(), tc.wantPuts)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "refused the manifest 5 times") || !strings.Contains(err.Error(), "pushing "+host+"/team/race") {
					t.Errorf("error does not say what happened: %v", err)
				}
				return
			}
			validateImage(t, res.Ref)
		})
	}
}

// TestRegistryHugeMessageBounded: a registry's error with a 5 MB message is
// cut (redact.MaxMessage), as S3's and the REST master's are.
func TestRegistryHugeMessageBounded(t *testing.T) {
	big := strings.Repeat("x", 5_000_000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"errors":[{"code":"NAME_INVALID","message":"`+big+`"}]}`)
	}))
	defer s.Close()
	_, err := Inspect(context.Background(), strings.TrimPrefix(s.URL, "http://")+"/team/app:1")
	if err == nil || len(err.Error()) > 2048 {
		t.Fatalf("error of %d bytes: %.200v", len(fmt.Sprint(err)), err)
	}
}
