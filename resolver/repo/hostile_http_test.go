package repo

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/lock"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// endless answers 200 with a chunked body of zeros that never ends.
func endless(w http.ResponseWriter, r *http.Request, n int) bool {
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 32<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(buf); err != nil {
			break
		}
	}
	return true
}

// gzipBomb answers Content-Encoding: gzip of mib MiB of zeros, and records
// the request's Accept-Encoding.
func gzipBomb(mib int, ae *atomic.Value) mavenhttp.Fault {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range mib {
		zw.Write(zero)
	}
	zw.Close()
	body := b.Bytes()
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		ae.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/java-archive")
		w.Write(body)
		return true
	}
}

// trickle answers 200 with size bytes (Content-Length set), one every gap.
func trickle(size int, gap time.Duration) mavenhttp.Fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(http.StatusOK)
		for range size {
			if _, err := w.Write([]byte(" ")); err != nil {
				return true
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return true
			case <-time.After(gap):
			}
		}
		return true
	}
}

// assertTmpEmpty fails when <cache>/tmp holds a file.
func assertTmpEmpty(t *testing.T, cache string) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(cache, "tmp"))
	for _, e := range ents {
		t.Errorf("%s left in <cache>/tmp", e.Name())
	}
}

// TestLockedJarBounded (audit 3, N4): a lock says 206 bytes; the server
// sends an endless body, or a gzip bomb. The download stops at the locked
// size: bad input (65) naming the URL, quickly, nothing left in the cache.
func TestLockedJarBounded(t *testing.T) {
	const jar = "/org/slf4j/slf4j-api/2.0.7/slf4j-api-2.0.7.jar"
	var ae atomic.Value
	for _, tc := range []struct {
		name  string
		fault mavenhttp.Fault
	}{
		{"endless chunked body", endless},
		{"gzip bomb", gzipBomb(32, &ae)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mavenhttp.New(t.TempDir())
			defer srv.Close()
			srv.SetFault(jar, tc.fault)
			lock := &lock.File{Artifacts: []lock.Artifact{{Coord: "org.slf4j:slf4j-api:2.0.7", File: "org.slf4j_slf4j-api-2.0.7.jar",
				Repository: srv.URL(), Sha256: strings.Repeat("ab", 32), Size: 206}}}
			cache := t.TempDir()
			start := time.Now()
			_, err := fetchLockedFor(context.Background(), lock, Config{CacheDir: cache}, fastOpts()...)
			took := time.Since(start)
			if got := errdefs.KindOf(err); got != errdefs.Invalid || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("exit %d, want %d (too large): %v", got, errdefs.Invalid, err)
			}
			for _, want := range []string{srv.URL() + jar[1:], "the lock says 206 bytes"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q: want %q", err, want)
				}
			}
			if took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if n := srv.Count(jar); n != 1 {
				t.Errorf("%d requests, want 1 (not retried)", n)
			}
			assertTmpEmpty(t, cache)
		})
	}
	if got := ae.Load(); got != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", got)
	}
}

// TestJarBoundedWithoutLock (N4): without a lock an artifact is capped
// (DefaultMaxArtifactSize; smaller here), and a gzip answer is not
// inflated: it is stored as sent and fails its checksum.
func TestJarBoundedWithoutLock(t *testing.T) {
	const jar = "/org/x/m/1.0/m-1.0.jar"
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	ref := func(s *Source) ArtifactRef {
		return ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: s.chain[0].Repository}
	}
	t.Run("endless body over the cap", func(t *testing.T) {
		srv := mavenhttp.New(a.Dir)
		defer srv.Close()
		srv.SetFault(jar, endless)
		s := testSource(t, []string{srv.URL()}, ChecksumWarn, WithMaxArtifactSize(1<<20))
		_, err := s.Artifact(context.Background(), ref(s))
		if errdefs.KindOf(err) != errdefs.Invalid || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), srv.URL()+jar[1:]) {
			t.Fatalf("err = %v (exit %d), want 65, too large, naming the URL", err, errdefs.KindOf(err))
		}
		assertNoBlobs(t, s.cache.Dir)
	})
	t.Run("gzip bomb", func(t *testing.T) {
		var ae atomic.Value
		srv := mavenhttp.New(a.Dir)
		defer srv.Close()
		srv.SetFault(jar, gzipBomb(32, &ae))
		// 32 MiB inflated would be over the cap; its 32 KiB as sent are not.
		s := testSource(t, []string{srv.URL()}, ChecksumWarn, WithMaxArtifactSize(1<<20))
		start := time.Now()
		_, err := s.Artifact(context.Background(), ref(s))
		if errdefs.KindOf(err) != errdefs.Invalid || !errors.Is(err, ErrChecksumMismatch) {
			t.Fatalf("err = %v (exit %d), want a checksum mismatch (65) of the body as sent", err, errdefs.KindOf(err))
		}
		if got := ae.Load(); got != "identity" {
			t.Errorf("Accept-Encoding %q, want identity", got)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("took %s: inflated?", took)
		}
		assertNoBlobs(t, s.cache.Dir)
	})
}

// TestSlowRepository (N5): a repository that trickles (the idle timer is
// reset by every byte) fails each attempt within the bound, and the
// retries end as 69. The bounds are scaled down: the metadata deadline
// (60s) and the minimum rate (1 KiB/s over 30s).
func TestSlowRepository(t *testing.T) {
	const (
		pom = "/org/x/m/1.0/m-1.0.pom"
		jar = "/org/x/m/1.0/m-1.0.jar"
	)
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	for _, tc := range []struct {
		name, path string
		fault      mavenhttp.Fault
		opt        Option
		want       string
	}{
		// The audit's POM, 1 byte every 2s: under the minimum rate.
		{"pom 1 byte per 2s", pom, trickle(2698, 2*time.Second), WithSlowLimits(time.Minute, 1024, 500*time.Millisecond), "too slow"},
		// Fast enough for the rate, not whole within the deadline.
		{"pom past the deadline", pom, trickle(2698, 20*time.Millisecond), WithSlowLimits(700*time.Millisecond, 10, 200*time.Millisecond), "did not send the whole response within 700ms"},
		{"jar 1 byte per 2s", jar, trickle(100000, 2*time.Second), WithSlowLimits(time.Minute, 1024, 500*time.Millisecond), "too slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mavenhttp.New(a.Dir)
			defer srv.Close()
			srv.SetFault(tc.path, tc.fault)
			s := testSource(t, []string{srv.URL()}, ChecksumWarn, tc.opt)
			start := time.Now()
			var err error
			if tc.path == pom {
				_, err = s.POM(context.Background(), "org.x", "m", "1.0")
			} else {
				_, err = s.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: s.chain[0].Repository})
			}
			took := time.Since(start)
			if errdefs.KindOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "after 3 attempts") {
				t.Fatalf("err = %v (exit %d), want 69 %q after 3 attempts", err, errdefs.KindOf(err), tc.want)
			}
			if n := srv.Count(tc.path); n != 3 {
				t.Errorf("%d attempts, want 3", n)
			}
			if took > 6*time.Second {
				t.Errorf("took %s, want about 3 × the bound", took)
			}
			assertTmpEmpty(t, s.cache.Dir)
		})
	}
}

// recorder is a Maven repository that records the Authorization header of
// each request.
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newRecorder(t *testing.T, dir string) *recorder {
	rec := &recorder{}
	fs := http.FileServer(http.Dir(dir))
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.auths = append(rec.auths, r.Header.Get("Authorization"))
		rec.mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// redirector answers every request with auth with a 302 to target+path.
func redirector(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cr3tPW" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, target+r.URL.Path, http.StatusFound)
	}
}

// TestRedirectsDropCredentials (N7): a repository with Basic auth that
// redirects to another port of the same host: the other server sees no
// Authorization. An https repository redirecting to http is refused (69,
// naming the repository), and the http server gets no request.
func TestRedirectsDropCredentials(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	b := newRecorder(t, a.Dir)
	creds := func(u string) string {
		p, _ := url.Parse(u)
		p.User = url.UserPassword("alice", "s3cr3tPW")
		return p.String() + "/"
	}

	t.Run("other port", func(t *testing.T) {
		srv := httptest.NewServer(redirector(b.URL))
		defer srv.Close()
		s := testSource(t, []string{creds(srv.URL)}, ChecksumWarn)
		if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
			t.Fatalf("POM through the redirect: %v", err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.auths) == 0 {
			t.Fatal("the redirect target got no request")
		}
		for _, h := range b.auths {
			if h != "" {
				t.Errorf("the redirect target got Authorization %q", h)
			}
		}
	})

	t.Run("https to http", func(t *testing.T) {
		b.mu.Lock()
		b.auths = nil
		b.mu.Unlock()
		srv := httptest.NewTLSServer(redirector(b.URL))
		defer srv.Close()
		s := testSource(t, []string{creds(srv.URL)}, ChecksumWarn, WithHTTPClient(srv.Client()))
		_, err := s.POM(context.Background(), "org.x", "m", "1.0")
		if errdefs.KindOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "redirected from https to "+b.URL) || !strings.Contains(err.Error(), srv.URL+"/org/x/m/1.0/m-1.0.pom") {
			t.Fatalf("err = %v (exit %d), want 69: https to http refused, naming the repository", err, errdefs.KindOf(err))
		}
		if strings.Contains(err.Error(), "s3cr3tPW") {
			t.Errorf("error %q holds the password", err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.auths) != 0 {
			t.Errorf("the http server got %d requests", len(b.auths))
		}
	})
}
