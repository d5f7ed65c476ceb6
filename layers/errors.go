package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// checkManifest refuses a registry's answer for a manifest that is no JSON
// (an HTML login or error page served with 200): bad input naming the
// answer, before its digest is compared with anything.
func checkManifest(what string, mediaType string, raw []byte) error {
	if json.Valid(raw) {
		return nil
	}
	head := raw
	if len(head) > 64 {
		head = head[:64]
	}
	return errdefs.Errorf(errdefs.Invalid, "%s: the registry answered %d bytes of %q that are not an image manifest (JSON): %s",
		what, len(raw), mediaType, redact.String(strconv.Quote(string(head))))
}

// registryError maps a registry error to prebake's exit codes: 401/403 → 77,
// not found → 66, unavailable (connection refused or reset, 5xx, 429) → 69.
// what names the operation and the reference; the message never holds
// credentials.
func registryError(err error, what string) error {
	if err == nil {
		return nil
	}
	var ee *errdefs.Error
	if errors.As(err, &ee) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errdefs.New(errdefs.Timeout, fmt.Errorf("%s: %w", what, err))
	}
	msg := redact.String(redact.Cut(err.Error(), redact.MaxMessage)) // a registry's message may be megabytes long
	wrap := func(code errdefs.Kind, hint string) error {
		return errdefs.New(code, &redactedError{msg: what + ": " + msg + hint, err: err})
	}
	// denied names the credentials option (WithBasicAuth) for the edge.
	denied := func() error {
		return errdefs.New(errdefs.Denied, &errdefs.OptionError{Option: "layers.WithBasicAuth",
			Err: &redactedError{msg: what + ": " + msg + " (check the Docker config or the registry credentials)", err: err}})
	}
	if strings.Contains(msg, "byte limit") {
		// go-containerregistry's bound on a manifest (internal/limit, an
		// untyped error): the answer is bad, not the registry unavailable.
		return wrap(errdefs.Invalid, " (the registry's answer is larger than a manifest may be)")
	}
	var te *transport.Error
	if errors.As(err, &te) {
		for _, d := range te.Errors {
			switch d.Code {
			case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
				return denied()
			case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
				return wrap(errdefs.NotFound, "")
			}
		}
		switch {
		case te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden:
			return denied()
		case te.StatusCode == http.StatusNotFound:
			return wrap(errdefs.NotFound, "")
		case te.StatusCode == http.StatusTooManyRequests || te.StatusCode >= 500:
			return wrap(errdefs.Unavailable, "")
		}
		return wrap(errdefs.Internal, "")
	}
	if errors.Is(err, os.ErrNotExist) {
		return wrap(errdefs.NotFound, "")
	}
	var ne net.Error
	var oe *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &oe) || errors.As(err, &ne) {
		if !strings.HasPrefix(what, "pushing") {
			return wrap(errdefs.Unavailable, " (registry unavailable)")
		}
		return wrap(errdefs.Unavailable, " (registry unavailable; rerun to resume: blobs already pushed are not sent again)")
	}
	return wrap(errdefs.Unavailable, "")
}

// redactedError prints a redacted message and keeps the chain for
// errors.Is/As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
