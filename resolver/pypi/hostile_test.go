package pypi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/resolver/cache"
)

// TestResolveRefusesHostileWheels: a wheel whose members or RECORD escape
// the install root, a symbolic link member, a RECORD hash or size that is
// not the member's, a zip bomb, duplicate members: each is refused when it
// is fetched (errdefs.Invalid, exit 65), naming the requirements line, the
// wheel and the member; neither the blob nor an index line is left in the
// cache. The same wheels from a find-links directory are refused too.
func TestResolveRefusesHostileWheels(t *testing.T) {
	const file = "evil-1.0-py3-none-any.whl"
	for _, h := range sitepkgstest.HostileWheels(t, "evil", "1.0") {
		t.Run(h.Case, func(t *testing.T) {
			ix := newFakeIndex(t, false)
			ix.add("evil", fakeFile{name: file, body: h.Data})
			r, c := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
			_, err := r.Resolve(context.Background(), readReqs(t, hashLine("evil", "1.0", h.Data)), testTarget)
			checkRefused(t, err, h)
			if _, serr := os.Stat(c.BlobPath(sha256Hex(h.Data))); serr == nil {
				t.Error("the refused wheel was committed to the cache")
			}
			if _, ok := c.Lookup(ix.URL + "/files/" + file); ok {
				t.Error("the refused wheel's URL was recorded in the cache index")
			}
			if tmp, _ := filepath.Glob(filepath.Join(c.Dir, "tmp", "*")); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}

			fl := t.TempDir()
			writeFile(t, fl, file, string(h.Data))
			r, c = newTestResolver(t, &IndexConfig{NoIndex: true, FindLinks: []string{fl}})
			_, err = r.Resolve(context.Background(), readReqs(t, hashLine("evil", "1.0", h.Data)), testTarget)
			checkRefused(t, err, h)
			if _, serr := os.Stat(c.BlobPath(sha256Hex(h.Data))); serr == nil {
				t.Error("find-links: the refused wheel was committed to the cache")
			}
		})
	}
}

func checkRefused(t *testing.T, err error, h sitepkgstest.Hostile) {
	t.Helper()
	if !errors.Is(err, h.Want) || !errors.Is(err, errdefs.Invalid) {
		t.Fatalf("error %v: want %v (invalid)", err, h.Want)
	}
	for _, s := range []string{"requirements.txt:1", "evil 1.0", "evil-1.0-py3-none-any.whl", h.Says} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// TestResolveRedirectDropsCredentials: an index (with credentials) whose
// file URL redirects to another host: the other host gets no
// Authorization, and the wheel, checked against the index's sha256, is
// fetched. A file of another digest than the page's is ErrHashMismatch.
func TestResolveRedirectDropsCredentials(t *testing.T) {
	wheelData := testWheel(t, "six", "1.16.0", "py2.py3-none-any")
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			leaked = append(leaked, a)
		}
		if strings.HasSuffix(r.URL.Path, "/tampered") {
			w.Write(append([]byte("x"), wheelData...))
			return
		}
		w.Write(wheelData)
	}))
	t.Cleanup(other.Close)
	ix := newFakeIndex(t, false)
	ix.user, ix.pass = "team", "s3cret"
	six := "six-1.16.0-py2.py3-none-any.whl"
	ix.add("six", fakeFile{name: six, body: wheelData})
	tampered := false
	inner := ix.Server.Config.Handler
	ix.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/files/") {
			target := other.URL + "/blob/" + six
			if tampered {
				target += "/tampered"
			}
			http.Redirect(w, r, target, http.StatusFound)
			return
		}
		inner.ServeHTTP(w, r)
	})
	cfg := &IndexConfig{IndexURL: strings.Replace(ix.simple(), "http://", "http://team:s3cret@", 1)}
	r, _ := newTestResolver(t, cfg)
	got, err := r.Resolve(context.Background(), readReqs(t, hashLine("six", "1.16.0", wheelData)), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Sha256 != sha256Hex(wheelData) {
		t.Errorf("got %+v", got)
	}
	if len(leaked) != 0 {
		t.Errorf("the other host got credentials: %q", leaked)
	}
	tampered = true
	r, c := newTestResolver(t, cfg)
	_, err = r.Resolve(context.Background(), readReqs(t, hashLine("six", "1.16.0", wheelData)), testTarget)
	if !errors.Is(err, ErrHashMismatch) || !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), six) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("tampered: %v, want ErrHashMismatch naming %s without the password", err, six)
	}
	if _, serr := os.Stat(c.BlobPath(sha256Hex(append([]byte("x"), wheelData...)))); serr == nil {
		t.Error("tampered: the file was committed to the cache")
	}
}

// TestRetryAfterInAll: the longest wait allowed bounds a request's
// Retry-After waits in all: two 1s waits do not fit in 1.5s, so the
// second 429 fails at once (76) instead of sleeping again.
func TestRetryAfterInAll(t *testing.T) {
	ix := newFakeIndex(t, false)
	ix.page = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	cfg := &IndexConfig{IndexURL: ix.simple()}
	c, err := cache.Open(t.TempDir(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(cfg, WithRetries(3, 1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewResolver(cfg, c, WithIndexClient(cl), WithUVEnv(noUV(t)))
	start := time.Now()
	_, err = r.Resolve(context.Background(), readReqs(t, "demo==1.0 --hash=sha256:"+zeros+"\n"), testTarget)
	var le *LimitError
	if !errors.Is(err, errdefs.RateLimited) || !errors.As(err, &le) || !le.TooLong || le.Attempts != 2 {
		t.Fatalf("error %v (%+v), want a 429 too long to wait for at the second attempt", err, le)
	}
	if d := time.Since(start); d > 1400*time.Millisecond {
		t.Errorf("took %s: waited past the 1.5s allowed in all", d)
	}
	if n := ix.pages.Load(); n != 2 {
		t.Errorf("%d page requests, want 2", n)
	}
}
