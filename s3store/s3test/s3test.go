// Package s3test is for tests only. It gives the tests their S3 servers,
// one way each: InProcess is gofakes3 in memory (unit tests; it checks no
// signature), Start the real S3 server of the integration tests (versitygw,
// posix backend, launched by the test bed: internal/testenv/bed) on
// 127.0.0.1, with a counting, fault injecting proxy of the test's own in
// front of it.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/prebake/prebake/internal/testenv/bed"
)

// Test credentials of the root user; never real ones.
const (
	AccessKey = bed.S3AccessKey
	SecretKey = bed.S3SecretKey
)

// InProcess serves gofakes3 (in memory) on 127.0.0.1 until the test ends,
// with the given buckets, and returns its endpoint (http://127.0.0.1:PORT).
func InProcess(t testing.TB, buckets ...string) string {
	t.Helper()
	return InProcessClock(t, nil, buckets...)
}

// InProcessClock is InProcess with the server's clock (nil: the real
// one): a gofakes3.FixedTimeSource dates objects and multipart uploads in
// the past, advanced by the test.
func InProcessClock(t testing.TB, clock gofakes3.TimeSource, buckets ...string) string {
	t.Helper()
	var opts []gofakes3.Option
	if clock != nil {
		// The clock is the test's, not the request signer's.
		opts = append(opts, gofakes3.WithTimeSource(clock), gofakes3.WithTimeSkewLimit(0))
	}
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(backend, opts...).Server())
	t.Cleanup(srv.Close)
	return srv.URL
}

// Server is a running versitygw: the run's shared one (the test bed's,
// internal/testenv/bed), where each test makes buckets of its own.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Root     string // the posix backend's directory: buckets are its subdirectories
}

// Start returns versitygw for the test (skipping unless PREBAKE_IT=1).
func Start(t testing.TB) *Server {
	t.Helper()
	s := bed.S3(t)
	return &Server{Endpoint: s.Endpoint, Root: s.Root}
}

// Client returns an SDK client for the server (or for endpoint when given).
func (s *Server) Client(endpoint string) *s3.Client {
	if endpoint == "" {
		endpoint = s.Endpoint
	}
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
}

// Bucket creates a bucket of the test's own, named name and a random
// suffix, and returns its name; it is removed at the test's end.
func (s *Server) Bucket(t testing.TB, name string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name += "-" + hex.EncodeToString(b)
	if _, err := s.Client("").CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(s.Root, name)) })
	return name
}

// MultipartUploads lists the multipart uploads in progress in bucket.
func (s *Server) MultipartUploads(t testing.TB, bucket string) []string {
	t.Helper()
	out, err := s.Client("").ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("listing multipart uploads in %s: %v", bucket, err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key)+" "+aws.ToString(u.UploadId))
	}
	return keys
}

// Delete removes bucket/key.
func (s *Server) Delete(t testing.TB, bucket, key string) {
	t.Helper()
	if _, err := s.Client("").DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatalf("deleting %s/%s: %v", bucket, key, err)
	}
}

// ObjectPath is where the posix backend keeps bucket/key.
func (s *Server) ObjectPath(bucket, key string) string {
	return filepath.Join(s.Root, bucket, filepath.FromSlash(key))
}

// Fault decides what the proxy does with a request: nil forwards it.
type Fault func(r *http.Request) Action

// Action is a proxy fault.
type Action int

// Proxy fault actions.
const (
	Forward  Action = iota
	SlowDown        // answer 503 SlowDown
	Internal        // answer 500 InternalError
	Drop            // read part of the body, then close the connection
	NotFound        // answer 404 (a HEAD that misses)
	// IgnoreConditional makes a conditional write (If-None-Match) overwrite,
	// like a server that ignores the header: the proxy deletes the key, then
	// forwards the (signed, unchanged) request.
	IgnoreConditional
	// Trickle forwards the request, then sends the server's answer with its
	// headers at once and its body 1 byte every 2s (slowloris).
	Trickle
)

// Proxy is a reverse proxy in front of the server that counts request body
// bytes and injects faults.
type Proxy struct {
	URL string
	// BodyBytes counts request body bytes that reached the proxy.
	BodyBytes atomic.Int64
	// Requests counts requests by method.
	mu       sync.Mutex
	requests map[string]int
	statuses map[int]int
	fault    atomic.Pointer[Fault]
}

// NewProxy starts a proxy in front of the server.
func (s *Server) NewProxy(t testing.TB) *Proxy {
	t.Helper()
	target, _ := url.Parse(s.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p := &Proxy{requests: map[string]int{}, statuses: map[int]int{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests[r.Method]++
		p.mu.Unlock()
		act := Forward
		if f := p.fault.Load(); f != nil {
			act = (*f)(r)
		}
		switch act {
		case SlowDown:
			n, _ := io.Copy(io.Discard, r.Body)
			p.BodyBytes.Add(n)
			writeError(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
			return
		case Internal:
			n, _ := io.Copy(io.Discard, r.Body)
			p.BodyBytes.Add(n)
			writeError(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
			return
		case NotFound:
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNotFound)
			return
		case IgnoreConditional:
			if r.Header.Get("If-None-Match") != "" {
				if bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); ok {
					_, _ = s.Client("").DeleteObject(r.Context(), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
				}
			}
		case Drop:
			n, _ := io.CopyN(io.Discard, r.Body, 64<<10)
			p.BodyBytes.Add(n)
			hj, ok := w.(http.Hijacker)
			if !ok {
				panic("proxy: no hijacker")
			}
			c, _, err := hj.Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		if act == Trickle {
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			for _, b := range rec.Body.Bytes() {
				if _, err := w.Write([]byte{b}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(2 * time.Second):
				}
			}
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		// versitygw answers a failed conditional PUT before it reads the
		// body and closes the connection; Go's reverse proxy, still writing
		// the body upstream, then sees a broken pipe and answers 502 instead
		// of the 412. So the proxy evaluates If-None-Match: * itself for
		// forwarded single PUTs (the upload part and Complete calls go on).
		if act == Forward && r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" && r.URL.Query().Get("partNumber") == "" {
			if bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); ok {
				if _, err := s.Client("").HeadObject(r.Context(), &s3.HeadObjectInput{Bucket: &bucket, Key: &key}); err == nil {
					n, _ := io.Copy(io.Discard, r.Body)
					p.BodyBytes.Add(n)
					writeError(sw, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
					p.mu.Lock()
					p.statuses[sw.status]++
					p.mu.Unlock()
					return
				}
			}
		}
		r.Body = &countBody{r.Body, &p.BodyBytes}
		rp.ServeHTTP(sw, r)
		p.mu.Lock()
		p.statuses[sw.status]++
		p.mu.Unlock()
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SetFault installs f (nil removes it).
func (p *Proxy) SetFault(f Fault) {
	if f == nil {
		p.fault.Store(nil)
		return
	}
	p.fault.Store(&f)
}

// Requests returns how many requests of method reached the proxy.
func (p *Proxy) Requests(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[method]
}

// Statuses returns how many forwarded requests got status.
func (p *Proxy) Statuses(status int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statuses[status]
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Reset zeroes the counters.
func (p *Proxy) Reset() {
	p.mu.Lock()
	p.requests = map[string]int{}
	p.statuses = map[int]int{}
	p.mu.Unlock()
	p.BodyBytes.Store(0)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
}

type countBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}
