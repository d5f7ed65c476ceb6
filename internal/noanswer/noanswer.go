// Package noanswer tells a server that accepted a request but sent no
// response headers in time apart from the caller's own deadline. net/http's
// ResponseHeaderTimeout error matches context.DeadlineExceeded, which
// prebake takes for the caller's own deadline (errdefs.Timeout, not
// retried); wrapped as an *Error it is a retryable connection failure
// (errdefs.Unavailable). Limits (slow.go) bounds a server that answers but
// trickles its body: a *SlowError, retryable the same way.
package noanswer

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Error is an attempt that got no response within D from Host, a What
// ("registry"; "" for none).
type Error struct {
	What string
	Host string
	D    time.Duration
	Msg  string
}

func (e *Error) Error() string {
	host := e.Host
	if e.What != "" {
		host = e.What + " " + host
	}
	if e.D > 0 {
		return fmt.Sprintf("no response from %s within %s (%s)", host, e.D, e.Msg)
	}
	return fmt.Sprintf("no response from %s (%s)", host, e.Msg)
}

// Timeout, Temporary and ConnectionError make retry logic (ggcr's
// transport, the AWS SDK's retryer) treat the attempt as retryable.
func (e *Error) Timeout() bool         { return true }
func (e *Error) Temporary() bool       { return true }
func (e *Error) ConnectionError() bool { return true }

// Wrap returns err as an *Error when it is a network timeout of r that is
// not r's own context ending (nor a *SlowError); otherwise err unchanged.
func Wrap(r *http.Request, what string, d time.Duration, err error) error {
	var se *SlowError
	if errors.As(err, &se) {
		return err
	}
	var ne net.Error
	if err != nil && r.Context().Err() == nil && errors.As(err, &ne) && ne.Timeout() {
		return &Error{What: what, Host: r.URL.Host, D: d, Msg: err.Error()}
	}
	return err
}

// Transport wraps an http.RoundTripper with Wrap.
type Transport struct {
	RT   http.RoundTripper
	What string
	D    time.Duration
}

func (t Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.RT.RoundTrip(r)
	if err = Wrap(r, t.What, t.D, err); err != nil {
		return nil, err
	}
	return resp, nil
}
