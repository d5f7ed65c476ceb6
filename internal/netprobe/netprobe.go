// Package netprobe makes one cheap request to a service and says what it
// answered: an HTTP status, or the class of the error that kept it from
// answering. It is what `prebake doctor` reports per repository and per
// REST server.
package netprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/prebake/prebake/internal/redact"
)

// The statuses of an Answer.
const (
	StatusOK          = "ok"          // 2xx or 3xx
	StatusAnswered    = "answered"    // another 4xx: the server is up (the probe's path may not exist there)
	StatusDenied      = "denied"      // 401 or 403: up, the credentials (or their absence) are refused
	StatusFailing     = "failing"     // 5xx: up, but failing
	StatusUnreachable = "unreachable" // no HTTP answer
	StatusAbsent      = "absent"      // a local directory that does not exist (file repositories)
)

// The error classes of an unreachable Answer.
const (
	ClassDNS     = "dns"
	ClassRefused = "refused"
	ClassTimeout = "timeout"
	ClassTLS     = "tls"
	ClassReset   = "reset"
	ClassOther   = "other"
)

// Answer is what one probe got.
type Answer struct {
	Status     string `json:"status"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	ErrorClass string `json:"errorClass,omitempty"`
	Error      string `json:"error,omitempty"`
	// Millis is how long the probe took, in milliseconds.
	Millis int64 `json:"ms"`
}

// Reachable reports whether the service answered in a way that lets it
// serve: an HTTP answer other than 5xx, or a local directory that exists.
func (a Answer) Reachable() bool {
	return a.Status != StatusUnreachable && a.Status != StatusFailing
}

// HTTP sends one request (method, e.g. HEAD or GET) to url with client,
// within timeout; prepare, when not nil, adds headers (credentials) to the
// request. The body is not read past a few bytes.
func HTTP(ctx context.Context, client *http.Client, method, url string, timeout time.Duration, prepare func(*http.Request)) Answer {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return Answer{Status: StatusUnreachable, ErrorClass: ClassOther, Error: redact.Line(err.Error())}
	}
	if prepare != nil {
		prepare(req)
	}
	resp, err := client.Do(req)
	a := Answer{Millis: time.Since(start).Milliseconds()}
	if err != nil {
		a.Status, a.ErrorClass = StatusUnreachable, Classify(err)
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap() // the cause, without the URL net/http quotes
		}
		a.Error = redact.Line(err.Error())
		return a
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 4096)
	resp.Body.Close()
	a.HTTPStatus = resp.StatusCode
	switch c := resp.StatusCode; {
	case c < 400:
		a.Status = StatusOK
	case c == http.StatusUnauthorized || c == http.StatusForbidden:
		a.Status = StatusDenied
	case c < 500:
		a.Status = StatusAnswered
	default:
		a.Status = StatusFailing
	}
	return a
}

// Dir reports whether a local directory exists, as an Answer.
func Dir(path string) Answer {
	start := time.Now()
	st, err := os.Stat(path)
	a := Answer{Millis: time.Since(start).Milliseconds()}
	switch {
	case err == nil && st.IsDir():
		a.Status = StatusOK
	case err == nil:
		a.Status, a.ErrorClass, a.Error = StatusUnreachable, ClassOther, "not a directory"
	case errors.Is(err, os.ErrNotExist):
		a.Status = StatusAbsent
	default:
		a.Status, a.ErrorClass = StatusUnreachable, ClassOther
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		a.Error = err.Error()
	}
	return a
}

// Classify names the class of a connection error.
func Classify(err error) string {
	var dns *net.DNSError
	var ne net.Error
	var x509u x509.UnknownAuthorityError
	var x509h x509.HostnameError
	var x509c x509.CertificateInvalidError
	var tlsr tls.RecordHeaderError
	var tlsv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &dns):
		return ClassDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassReset
	case errors.As(err, &x509u), errors.As(err, &x509h), errors.As(err, &x509c), errors.As(err, &tlsr), errors.As(err, &tlsv):
		return ClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	}
	return ClassOther
}
