package noanswer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Defaults of Limits, like curl's low-speed limit: a metadata-sized
// response (a POM, a manifest) must be complete within DefaultDeadline, and
// any body must bring at least DefaultMinRate bytes per second, averaged
// over DefaultWindow.
const (
	DefaultDeadline = 60 * time.Second
	DefaultMinRate  = 1024
	DefaultWindow   = 30 * time.Second
)

// Kind is how Limits treats a request.
type Kind int

const (
	// Pass: no limit (beyond the transport's own response-header timeout).
	Pass Kind = iota
	// Small: a metadata-sized response; headers and body within Deadline,
	// the body at MinRate at least.
	Small
	// Stream: a big body (a jar, a blob); at MinRate at least.
	Stream
)

// Limits bounds slow responses (slowloris): a server that trickles bytes
// fails the attempt with a *SlowError, which retry logic takes for a
// connection failure (Timeout, Temporary, ConnectionError).
type Limits struct {
	What     string                   // "registry", "S3"; "" for none
	Classify func(*http.Request) Kind // nil: every request is Stream
	Deadline time.Duration            // Small: total per attempt; 0: none
	MinRate  int64                    // bytes/s averaged over Window; 0: none
	Window   time.Duration
	// MaxBuffer > 0 reads a Small body ahead, up to MaxBuffer bytes, before
	// Do returns: a slow body then fails inside Do, where a retrying client
	// (ggcr's transport, the AWS SDK) retries it.
	MaxBuffer int64
}

// SlowError is an attempt that a server answered too slowly.
type SlowError struct {
	What, Host string
	Deadline   time.Duration // the Deadline missed, or 0 when the rate was too low
	Got        int64         // bytes received in the last Window
	MinRate    int64
	Window     time.Duration
}

func (e *SlowError) Error() string {
	host := e.Host
	if e.What != "" {
		host = e.What + " " + host
	}
	if e.Deadline > 0 {
		return fmt.Sprintf("timeout: %s did not send the whole response within %s", host, e.Deadline)
	}
	return fmt.Sprintf("timeout: %s is too slow: %d bytes in %s, under the minimum of %d bytes/s", host, e.Got, e.Window, e.MinRate)
}

func (e *SlowError) Timeout() bool         { return true }
func (e *SlowError) Temporary() bool       { return true }
func (e *SlowError) ConnectionError() bool { return true }

func (l Limits) kind(r *http.Request) Kind {
	if l.Classify == nil {
		return Stream
	}
	return l.Classify(r)
}

// Do is next(r) under the limits of r's Kind.
func (l Limits) Do(r *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return l.DoKind(l.kind(r), r, next)
}

// DoKind is next(r) under the limits of kind.
func (l Limits) DoKind(kind Kind, r *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if kind == Pass || (l.MinRate <= 0 && (kind != Small || l.Deadline <= 0)) {
		return next(r)
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	w := &watch{cancel: cancel, ctx: ctx}
	if kind == Small && l.Deadline > 0 {
		w.deadline = time.AfterFunc(l.Deadline, func() {
			cancel(&SlowError{What: l.What, Host: r.URL.Host, Deadline: l.Deadline})
		})
	}
	resp, err := next(r.WithContext(ctx))
	if err != nil {
		err = w.cause(err)
		w.stop()
		return nil, err
	}
	if l.MinRate > 0 && l.Window > 0 {
		w.startMeter(l, r.URL.Host)
	}
	b := &body{rc: resp.Body, w: w}
	resp.Body = b
	if kind != Small || l.MaxBuffer <= 0 {
		return resp, nil
	}
	data, err := io.ReadAll(io.LimitReader(b, l.MaxBuffer))
	if err != nil {
		b.Close()
		return nil, err
	}
	if int64(len(data)) < l.MaxBuffer { // the whole body
		b.Close()
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return resp, nil
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), b), b}
	return resp, nil
}

// SlowTransport is an http.RoundTripper under Limits.
type SlowTransport struct {
	RT http.RoundTripper
	Limits
}

func (t SlowTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.Do(r, t.RT.RoundTrip)
}

// watch cancels one attempt when its deadline passes or its body is slow.
type watch struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	deadline *time.Timer

	mu      sync.Mutex
	stopped bool
	meter   *time.Timer
	n, last int64
}

func (w *watch) startMeter(l Limits, host string) {
	min := l.MinRate * int64(l.Window/time.Second)
	if l.Window < time.Second {
		min = l.MinRate * int64(l.Window) / int64(time.Second)
	}
	check := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.stopped {
			return
		}
		if got := w.n - w.last; got < min {
			w.cancel(&SlowError{What: l.What, Host: host, Got: got, MinRate: l.MinRate, Window: l.Window})
			return
		}
		w.last = w.n
		w.meter.Reset(l.Window)
	}
	w.mu.Lock()
	w.meter = time.AfterFunc(l.Window, check)
	w.mu.Unlock()
}

func (w *watch) add(n int) {
	w.mu.Lock()
	w.n += int64(n)
	w.mu.Unlock()
}

// stop ends the watch: its timers stop and the attempt's context ends.
func (w *watch) stop() {
	w.mu.Lock()
	w.stopped = true
	if w.meter != nil {
		w.meter.Stop()
	}
	w.mu.Unlock()
	if w.deadline != nil {
		w.deadline.Stop()
	}
	w.cancel(nil)
}

// cause is the *SlowError that ended the attempt, else err.
func (w *watch) cause(err error) error {
	var se *SlowError
	if errors.As(context.Cause(w.ctx), &se) {
		return se
	}
	return err
}

// body is a response body under a watch.
type body struct {
	rc   io.ReadCloser
	w    *watch
	once sync.Once
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.add(n)
	}
	if err != nil && err != io.EOF {
		err = b.w.cause(err)
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.once.Do(b.w.stop)
	return err
}
