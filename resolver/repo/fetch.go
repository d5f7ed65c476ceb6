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
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/noanswer"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/redirect"
	"github.com/prebake/prebake/internal/retryafter"
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
	// Repository is the root URL of the repository that answered, without
	// userinfo ("" when unknown): a 401/403 names it (see Error).
	Repository string
	// retryAfter is the server's Retry-After (429, 503), uncapped; 0 when
	// it gave none.
	retryAfter time.Duration
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("GET %s: %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden) && e.Repository != "" {
		msg += fmt.Sprintf(" (repository %s refused the request: check its credentials; a repository behind a CDN, Maven Central among them, also answers 403 on some cache misses and to clients it blocks: retry later or use a mirror)", e.Repository)
	}
	return msg
}

// Is makes a 404/410 match ErrNotFound.
func (e *HTTPError) Is(target error) bool {
	return target == ErrNotFound && (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusGone)
}

// RateLimitError is a 429 Too Many Requests from a repository: it is
// throttling this client (Maven Central's limits), which says nothing of
// whether the file exists. It is never ErrNotFound and never cached; its
// kind is errdefs.RateLimited.
type RateLimitError struct {
	URL        string // the file, without userinfo
	Repository string // the repository's root URL, without userinfo
	// RetryAfter is the server's Retry-After (0 when it gave none) and At
	// the time it names.
	RetryAfter time.Duration
	At         time.Time
	// MaxWait is the longest wait allowed (WithMaxRetryWait); TooLong is
	// true when the Retry-After was longer, so nothing was waited.
	MaxWait  time.Duration
	TooLong  bool
	Attempts int
}

func (e *RateLimitError) Error() string {
	repo := e.Repository
	if repo == "" {
		repo = hostOf(e.URL)
	}
	msg := fmt.Sprintf("GET %s: 429 Too Many Requests: repository %s is rate-limiting this client", e.URL, repo)
	if e.Attempts == 0 {
		msg = fmt.Sprintf("GET %s: not sent: repository %s is rate-limiting this client (429 Too Many Requests to an earlier request)", e.URL, repo)
	}
	return msg + retryafter.Advice(e.RetryAfter, e.At, e.MaxWait, e.TooLong, e.Attempts, "use a mirror (a repository manager), or bring the jars with bundle import")
}

// rateLimited is e as an error of kind RateLimited; when e.TooLong, the
// wait allowed (WithMaxRetryWait) explains it.
func rateLimited(e *RateLimitError) error {
	if e.TooLong {
		return errdefs.New(errdefs.RateLimited, &errdefs.OptionError{Option: "resolver.Request.MaxRetryWait", Err: e})
	}
	return errdefs.New(errdefs.RateLimited, e)
}

// fetcher does GETs with retries, bounded per-host concurrency and one
// keep-alive client.
type fetcher struct {
	client       *http.Client
	log          Logger
	attempts     int
	backoff      time.Duration
	maxRetryWait time.Duration // the longest total Retry-After wait of one request
	idleTimeout  time.Duration
	slow         noanswer.Limits // see options.slow
	maxArtifact  int64
	perHost      int
	// central reports whether a host is Maven Central's (isCentralHost;
	// tests replace it): those hosts share one budget of centralPerHost
	// requests in flight, and a 403 from them is retried.
	central  func(host string) bool
	progress Progress // reports artifact downloads (see track)

	mu       sync.Mutex
	hostSems map[string]*hostSem
	// blocked: host → when its last 429 said to retry. Until then a
	// request that may not wait so long is not sent (Central blocks the
	// whole IP: more requests only add to the count).
	blocked map[string]time.Time
}

// block records that host asked (429) not to be asked before until.
func (f *fetcher) block(host string, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.blocked == nil {
		f.blocked = map[string]time.Time{}
	}
	if until.After(f.blocked[host]) {
		f.blocked[host] = until
	}
}

// blockedFor is how long host asked not to be asked any more (0 if not).
func (f *fetcher) blockedFor(host string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return max(0, time.Until(f.blocked[host]))
}

// newFetcher is the fetcher of o.
func newFetcher(o *options) *fetcher {
	return &fetcher{
		client: o.client, log: o.log, attempts: o.attempts, backoff: o.backoff,
		maxRetryWait: o.maxRetryWait, idleTimeout: o.idleTimeout, perHost: o.perHost,
		slow: o.slow, maxArtifact: o.maxArtifact, hostSems: map[string]*hostSem{}, progress: o.progress,
		central: o.central,
	}
}

// centralPerHost is how many requests a prebake process has in flight to
// Maven Central at most (all its host names are one budget, as Sonatype
// counts them), across its sources and fetchers (warm's concurrent sets
// too), whatever WithMaxPerHost allows other repositories: Maven's own
// resolver uses 5 threads. A mirror is not limited by it.
const centralPerHost = 4

// centralSem is the process's one budget for Central (centralPerHost).
var centralSem = newHostSem(centralPerHost)

// centralHosts are Maven Central's host names (repo.maven.apache.org is a
// CNAME of repo1.maven.org: one budget).
var centralHosts = []string{"repo1.maven.org", "repo.maven.apache.org", "repo.maven.org", "central.maven.org"}

// isCentralHost reports whether host (a URL's host[:port]) is Maven Central's.
func isCentralHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return slices.Contains(centralHosts, strings.ToLower(h))
}

func (f *fetcher) isCentral(host string) bool {
	if f.central != nil {
		return f.central(host)
	}
	return isCentralHost(host)
}

// sems are the limits a request to host takes, in this order: the
// fetcher's per-host limit (WithMaxPerHost), then, for Central, the
// process's Central budget. One order everywhere: no deadlock.
func (f *fetcher) sems(host string) []*hostSem {
	f.mu.Lock()
	s, ok := f.hostSems[host]
	if !ok {
		s = newHostSem(f.perHost)
		f.hostSems[host] = s
	}
	f.mu.Unlock()
	if f.isCentral(host) {
		return []*hostSem{s, centralSem}
	}
	return []*hostSem{s}
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
	repo       string // the repository's root URL, without userinfo
	user, pass string
	hasAuth    bool
	// low marks a speculative request for the per-host limit (hostSem):
	// such requests hold at most half the slots and yield to the others.
	low bool
}

// priority returns t with low set to low.
func (t target) priority(low bool) target { t.low = low; return t }

func (r *entry) target(rel string) target {
	return target{url: r.base + rel, repo: r.URL, user: r.user, pass: r.pass, hasAuth: r.hasAuth}
}

// errTruncated marks a body shorter than its Content-Length.
var errTruncated = errors.New("truncated body")

// get downloads t.url into w (which is reset before each retry). It
// returns an error that names the URL (without userinfo) and carries an
// errdefs kind: 404/410 match ErrNotFound and are never retried; 401/403
// are Denied (a 403 from Maven Central, which answers it on some cache
// misses, is retried first); 429 is RateLimited (a *RateLimitError naming
// the repository and its Retry-After); 5xx, timeouts and truncated bodies
// are retried with backoff and end as Unavailable. None of them is ever
// "not found". A 429 or 503 waits its Retry-After, unless the waits of
// this request would then pass maxRetryWait or ctx's deadline: it fails at
// once instead of sleeping. Every wait ends with ctx.
func (f *fetcher) get(ctx context.Context, t target, w resetWriter) error {
	var last error
	var waited time.Duration
	attempts := 0
	for attempt := 0; attempt < f.attempts; attempt++ {
		if attempt > 0 {
			if err := w.reset(); err != nil {
				return errdefs.New(errdefs.CantWrite, fmt.Errorf("GET %s: %w", t.url, err))
			}
		}
		if d := f.blockedFor(hostOf(t.url)); d > 0 && waited+d > f.maxRetryWait {
			// An earlier 429 of this host asked for longer than this
			// request may wait: fail without asking again.
			return f.final(t, &HTTPError{URL: t.url, StatusCode: http.StatusTooManyRequests, Repository: t.repo, retryAfter: d.Round(time.Second)}, attempts, true)
		}
		attempts++
		wait, err := f.once(ctx, t, w)
		if err == nil {
			return nil
		}
		last = err
		if wait < 0 { // not retryable
			return err
		}
		var he *HTTPError
		asked := errors.As(err, &he) && he.retryAfter > 0
		if asked && he.StatusCode == http.StatusTooManyRequests {
			f.block(hostOf(t.url), time.Now().Add(he.retryAfter))
		}
		if asked && waited+he.retryAfter > f.maxRetryWait {
			// Central's IP blocks say Retry-After: 1800. Sleeping that long
			// helps nobody: say so now, with when to retry.
			return f.final(t, he, attempts, true)
		}
		if ctx.Err() != nil {
			return errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w", t.url, ctx.Err()))
		}
		if attempt+1 >= f.attempts {
			break
		}
		if asked {
			wait = he.retryAfter
		}
		if wait == 0 {
			wait = f.backoff << attempt
			wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// The overall budget ends before the server would take the
			// request again: fail now rather than sleep into the deadline.
			if errors.As(err, &he) && he.StatusCode == http.StatusTooManyRequests {
				return f.final(t, he, attempts, false)
			}
			return errdefs.New(errdefs.Unavailable, fmt.Errorf("%w (after %d attempts; the next in %s would pass the deadline)", last, attempt+1, wait.Round(time.Millisecond)))
		}
		if asked {
			waited += wait
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
		return f.final(t, he, attempts, false)
	}
	return errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w (after %d attempts)", t.url, last, attempts))
}

// final is the error of a request whose last answer was he, after
// attempts; tooLong says its Retry-After was longer than maxRetryWait
// allows (so it was not waited).
func (f *fetcher) final(t target, he *HTTPError, attempts int, tooLong bool) error {
	switch {
	case he.StatusCode == http.StatusTooManyRequests:
		e := &RateLimitError{URL: t.url, Repository: t.repo, RetryAfter: he.retryAfter, MaxWait: f.maxRetryWait, TooLong: tooLong, Attempts: attempts}
		if e.RetryAfter > 0 {
			e.At = time.Now().Add(e.RetryAfter).Truncate(time.Second)
		}
		return rateLimited(e)
	case he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden:
		return errdefs.New(errdefs.Denied, fmt.Errorf("%w (after %d attempts)", he, attempts))
	case tooLong:
		return errdefs.New(errdefs.Unavailable, &errdefs.OptionError{Option: "resolver.Request.MaxRetryWait",
			Err: fmt.Errorf("%w: it asks to retry after %s, longer than the %s prebake may wait, so it did not", he, he.retryAfter, f.maxRetryWait)})
	}
	return errdefs.New(errdefs.Unavailable, fmt.Errorf("%w (after %d attempts)", he, attempts))
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
	spec := t.low
	for _, sem := range f.sems(u.Host) {
		if err := sem.acquire(ctx, spec); err != nil {
			return -1, errdefs.New(errdefs.Unavailable, fmt.Errorf("GET %s: %w", t.url, err))
		}
		defer sem.release(spec)
	}

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
	case resp.StatusCode == http.StatusForbidden && f.isCentral(req.URL.Host):
		// Central's edge answers 403 on some cache misses: retried, then
		// Denied (final), never "not found".
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, &HTTPError{URL: t.url, StatusCode: resp.StatusCode, Repository: t.repo}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return -1, errdefs.New(errdefs.Denied, &HTTPError{URL: t.url, StatusCode: resp.StatusCode, Repository: t.repo})
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		// Throttled or overloaded: get waits as long as the server asks,
		// within maxRetryWait (the default backoff without a Retry-After).
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, &HTTPError{URL: t.url, StatusCode: resp.StatusCode, Repository: t.repo, retryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
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

// maxRetryAfter bounds a parsed Retry-After.
const maxRetryAfter = retryafter.Max

// parseRetryAfter parses Retry-After (delay-seconds or an HTTP date) at
// now: 0 when absent, unparsable or past; at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration { return retryafter.Parse(v, now) }

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
