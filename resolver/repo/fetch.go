package repo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/noanswer"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/redirect"
)

// ErrChecksumMismatch is matched by every checksum mismatch error.
var ErrChecksumMismatch = errors.New("checksum mismatch")

// ErrChecksumMissing is matched when ChecksumStrict finds no
// checksum file.
var ErrChecksumMissing = errors.New("no checksum file")

// HTTPError is a non-success HTTP status from a repository (after retries).
type HTTPError struct {
	URL        string // without userinfo
	StatusCode int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// Is makes a 404/410 match ErrNotFound.
func (e *HTTPError) Is(target error) bool {
	return target == ErrNotFound && (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusGone)
}

// fetcher does GETs with retries, bounded per-host concurrency and one
// keep-alive client.
type fetcher struct {
	client        *http.Client
	log           Logger
	attempts      int
	backoff       time.Duration
	maxRetryAfter time.Duration
	idleTimeout   time.Duration
	slow          noanswer.Limits // see options.slow
	maxArtifact   int64
	perHost       int
	progress      Progress // reports artifact downloads (see track)

	mu   sync.Mutex
	sems map[string]*hostSem
}

func (f *fetcher) sem(host string) *hostSem {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sems[host]
	if !ok {
		s = newHostSem(f.perHost)
		f.sems[host] = s
	}
	return s
}

// hostSem bounds the concurrent requests to one host. Low-priority requests
// (speculative jar downloads, see source.speculate) hold at most half the
// slots, and a freed slot goes to a waiting ordinary request first, so
// speculation does not starve the critical path.
type hostSem struct {
	mu                   sync.Mutex
	max, specMax         int
	used, specUsed       int
	waiting, specWaiting []chan struct{}
}

func newHostSem(n int) *hostSem {
	return &hostSem{max: n, specMax: max(1, n/2)}
}

func (s *hostSem) free(spec bool) bool {
	if spec {
		return s.used < s.max && s.specUsed < s.specMax && len(s.waiting) == 0 && len(s.specWaiting) == 0
	}
	return s.used < s.max && len(s.waiting) == 0
}

func (s *hostSem) take(spec bool) {
	s.used++
	if spec {
		s.specUsed++
	}
}

// acquire takes a slot, or fails when ctx ends first.
func (s *hostSem) acquire(ctx context.Context, spec bool) error {
	s.mu.Lock()
	if s.free(spec) {
		s.take(spec)
		s.mu.Unlock()
		return nil
	}
	ready := make(chan struct{})
	if spec {
		s.specWaiting = append(s.specWaiting, ready)
	} else {
		s.waiting = append(s.waiting, ready)
	}
	s.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	select {
	case <-ready: // granted meanwhile: give it back
		s.mu.Unlock()
		s.release(spec)
		return ctx.Err()
	default:
	}
	if spec {
		s.specWaiting = slices.DeleteFunc(s.specWaiting, func(c chan struct{}) bool { return c == ready })
	} else {
		s.waiting = slices.DeleteFunc(s.waiting, func(c chan struct{}) bool { return c == ready })
	}
	s.mu.Unlock()
	return ctx.Err()
}

// release frees a slot and hands free slots to waiters, ordinary first.
func (s *hostSem) release(spec bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
	if spec {
		s.specUsed--
	}
	for len(s.waiting) > 0 && s.used < s.max {
		s.take(false)
		close(s.waiting[0])
		s.waiting = s.waiting[1:]
	}
	for len(s.waiting) == 0 && len(s.specWaiting) > 0 && s.used < s.max && s.specUsed < s.specMax {
		s.take(true)
		close(s.specWaiting[0])
		s.specWaiting = s.specWaiting[1:]
	}
}

// target is one URL to GET: the printable form, its credentials and its
// priority.
type target struct {
	url        string // without userinfo
	user, pass string
	hasAuth    bool
	// low marks a speculative request for the per-host limit (hostSem):
	// such requests hold at most half the slots and yield to the others.
	low bool
}

// priority returns t with low set to low.
func (t target) priority(low bool) target { t.low = low; return t }

func (r *entry) target(rel string) target {
	return target{url: r.base + rel, user: r.user, pass: r.pass, hasAuth: r.hasAuth}
}

// errTruncated marks a body shorter than its Content-Length.
var errTruncated = errors.New("truncated body")

// get downloads t.url into w (which is reset before each retry). It
// returns an error that names the URL (without userinfo) and carries an
// exit code: 404/410 match ErrNotFound and are never retried; 401/403 are
// NoPerm; 5xx, 429, timeouts and truncated bodies are retried with backoff
// (429 and 503 after their Retry-After, capped at maxRetryAfter) and end as
// Unavailable, never as not found. A wait that would pass ctx's deadline
// ends the retries at once.
func (f *fetcher) get(ctx context.Context, t target, w resetWriter) error {
	var last error
	for attempt := 0; attempt < f.attempts; attempt++ {
		if attempt > 0 {
			if err := w.reset(); err != nil {
				return errdefs.New(errdefs.CantWrite, fmt.Errorf("GET %s: %w", t.url, err))
			}
		}
		wait, err := f.once(ctx, t, w)
		if err == nil {
			return nil
		}
		last = err
		if wait < 0 { // not retryable
			return err
		}
		if ctx.Err() != nil {
			return errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w", t.url, ctx.Err()))
		}
		if attempt+1 >= f.attempts {
			break
		}
		if wait == 0 {
			wait = f.backoff << attempt
			wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// The overall budget ends before the server would take the
			// request again: fail now rather than sleep into the deadline.
			return errdefs.New(errdefs.Unavailable, fmt.Errorf("%w (after %d attempts; the next in %s would pass the deadline)", last, attempt+1, wait.Round(time.Millisecond)))
		}
		if rl, ok := f.log.(retryLogger); ok {
			rl.Retryf(hostOf(t.url), "retrying %s in %s: %s", t.url, wait.Round(time.Millisecond), redact.String(err.Error()))
		} else {
			f.log.Printf("retrying %s in %s: %s", t.url, wait.Round(time.Millisecond), redact.String(err.Error()))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w", t.url, ctx.Err()))
		case <-timer.C:
		}
	}
	var he *HTTPError
	if errors.As(last, &he) {
		return errdefs.New(errdefs.Unavailable, fmt.Errorf("%w (after %d attempts)", last, f.attempts))
	}
	return errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w (after %d attempts)", t.url, last, f.attempts))
}

// resetWriter is a download destination that can start over.
type resetWriter interface {
	io.Writer
	reset() error
}

// once does one attempt. wait < 0 means "do not retry"; wait > 0 is the
// server's Retry-After; 0 means the default backoff.
func (f *fetcher) once(ctx context.Context, t target, w io.Writer) (time.Duration, error) {
	u, err := url.Parse(t.url)
	if err != nil {
		return -1, errdefs.Errorf(errdefs.BadArgument, "bad URL %s: %v", redact.URL(t.url), redactErr(err))
	}
	sem, spec := f.sem(u.Host), t.low
	if err := sem.acquire(ctx, spec); err != nil {
		return -1, errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w", t.url, err))
	}
	defer sem.release(spec)

	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(actx, http.MethodGet, t.url, nil)
	if err != nil {
		return -1, errdefs.Errorf(errdefs.BadArgument, "bad URL %s: %v", t.url, redactErr(err))
	}
	if t.hasAuth {
		req.SetBasicAuth(t.user, t.pass)
	}
	kind := noanswer.Small
	if !metadataSized(t.url) {
		// An artifact: set explicitly, so that Go's transport does not
		// inflate a Content-Encoding: gzip body past the size bound (a jar
		// is compressed already; a gzip answer is then a checksum mismatch).
		req.Header.Set("Accept-Encoding", "identity")
		kind = noanswer.Stream
	}
	// An idle timer cancels the attempt when no byte arrives for idleTimeout
	// (headers or body). f.slow fails a metadata-sized file that is not
	// whole after its deadline and any body under its minimum rate, as a
	// trickle resets the idle timer with every byte; big jars are not
	// limited by a total timeout.
	idle := time.AfterFunc(f.idleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	resp, err := f.slow.DoKind(kind, req, f.client.Do)
	if err != nil {
		var re *redirect.DowngradeError
		if errors.As(err, &re) {
			return -1, errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w", t.url, re))
		}
		return 0, netErr(t.url, err, actx)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return -1, errdefs.New(errdefs.NotFound, &HTTPError{URL: t.url, StatusCode: resp.StatusCode})
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return -1, errdefs.New(errdefs.Denied, &HTTPError{URL: t.url, StatusCode: resp.StatusCode})
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		// Throttled or overloaded: wait as long as the server asks (within
		// maxRetryAfter), the default backoff without a Retry-After.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return f.retryAfter(resp.Header.Get("Retry-After")), &HTTPError{URL: t.url, StatusCode: resp.StatusCode}
	case resp.StatusCode >= 500:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, &HTTPError{URL: t.url, StatusCode: resp.StatusCode}
	default:
		return -1, errdefs.New(errdefs.Unavailable, &HTTPError{URL: t.url, StatusCode: resp.StatusCode})
	}
	if c, ok := w.(capped); ok && resp.ContentLength > c.limit() {
		return -1, errdefs.New(errdefs.Invalid, fmt.Errorf("GET %s: %d bytes, %w", t.url, resp.ContentLength, tooLarge(c.limit())))
	}
	if s, ok := w.(contentLengthSetter); ok {
		s.begin(resp.ContentLength)
	}
	n, err := io.Copy(w, &idleReader{r: resp.Body, t: idle, d: f.idleTimeout})
	if err != nil {
		var we *writeError
		if errors.As(err, &we) {
			if errors.Is(we.err, ErrTooLarge) {
				return -1, errdefs.New(errdefs.Invalid, fmt.Errorf("GET %s: %w", t.url, we.err))
			}
			return -1, errdefs.New(errdefs.CantWrite, fmt.Errorf("GET %s: writing to the cache: %w", t.url, we.err))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && resp.ContentLength > 0 {
			return 0, fmt.Errorf("%w: got %d of %d bytes", errTruncated, n, resp.ContentLength)
		}
		return 0, netErr(t.url, err, actx)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return 0, fmt.Errorf("%w: got %d of %d bytes", errTruncated, n, resp.ContentLength)
	}
	return 0, nil
}

var errIdle = errors.New("timeout: no data received")

// netErr describes a transport error without the URL Go's client quotes
// (it may hold userinfo in other clients; ours never does, but be sure).
func netErr(u string, err error, ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errIdle) {
		return errIdle
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var se *noanswer.SlowError
	if errors.As(err, &se) {
		return se
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timeout: %s", redact.String(err.Error()))
	}
	return errors.New(redact.String(err.Error()))
}

// retryAfter parses Retry-After (seconds or an HTTP date), capped at
// maxRetryAfter; absent, unparsable or in the past it is the first backoff.
func (f *fetcher) retryAfter(v string) time.Duration {
	var d time.Duration
	v = strings.TrimSpace(v)
	if v != "" && strings.Trim(v, "0123456789") == "" { // delay-seconds
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(f.maxRetryAfter/time.Second)+1 {
			secs = int64(f.maxRetryAfter/time.Second) + 1 // capped below; no overflow
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d <= 0 {
		d = f.backoff
	}
	if d > f.maxRetryAfter {
		d = f.maxRetryAfter
	}
	return d
}

// idleReader resets the idle timer on each read.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}

// writeError marks a failure of the destination, not the network.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// memBuf is a resetWriter in memory with a size cap (checksums, metadata).
type memBuf struct {
	b   []byte
	max int
}

func (m *memBuf) Write(p []byte) (int, error) {
	if len(m.b)+len(p) > m.max {
		return 0, &writeError{tooLarge(int64(m.max))}
	}
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memBuf) reset() error { m.b = m.b[:0]; return nil }

// fileDest adapts a tempWriter, marking its errors as write errors.
type fileDest struct{ t *cache.TempWriter }

func (d fileDest) Write(p []byte) (int, error) {
	n, err := d.t.Write(p)
	if err != nil {
		return n, &writeError{err}
	}
	return n, nil
}

func (d fileDest) reset() error { return d.t.Reset() }
