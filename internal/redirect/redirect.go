// Package redirect holds the redirect policies of prebake's HTTP clients:
// credentials never follow a redirect to another scheme, host or port, and
// an https → http downgrade is refused. Go's client keeps Authorization
// when only the port or the scheme changes.
package redirect

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/prebake/prebake/internal/redact"
)

// DowngradeError is a refused redirect from https to another scheme.
type DowngradeError struct{ From, To *url.URL }

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("redirected from https to %s: refused (the credentials and the file would travel in clear text)", redact.URL(e.To.String()))
}

// maxRedirects is Go's default limit.
const maxRedirects = 10

// DropCredentials returns a copy of c whose redirects carry no
// Authorization to another origin than the first request's, and refuse an
// https → http downgrade (a *DowngradeError, wrapped in the *url.Error of
// Do). c's own CheckRedirect, if any, still applies after.
func DropCredentials(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if prev := via[len(via)-1].URL; prev.Scheme == "https" && req.URL.Scheme != "https" {
			return &DowngradeError{From: prev, To: req.URL}
		}
		if !SameOrigin(via[0].URL, req.URL) {
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// SameOriginOnly is a CheckRedirect that follows only a 307 or 308 (the
// method and the signed headers kept) to the first request's origin; any
// other redirect is returned to the caller as the response (a signed
// request's Authorization never goes to another host:port).
func SameOriginOnly(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects || !SameOrigin(via[0].URL, req.URL) || req.Response == nil ||
		(req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect) {
		return http.ErrUseLastResponse
	}
	return nil
}

// SameOrigin compares scheme, host and port (a default port made explicit).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
