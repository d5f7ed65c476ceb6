package repo

import (
	"net/http"
	"strings"
)

// userAgentURL is where a repository's operator learns what prebake is.
const userAgentURL = "https://github.com/prebake/prebake"

// UserAgent is the User-Agent prebake sends to every repository:
// "prebake/<version> (+https://github.com/prebake/prebake)", or without
// "/<version>" when version is "". It makes prebake traceable by Maven
// Central's operators (who block clients by user agent). Characters a
// product token may not hold ("(devel) 0123abcd") become '-'.
func UserAgent(version string) string {
	v := strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(".+_-", r):
			return r
		}
		return '-'
	}, version), "-")
	if len(v) > 64 {
		v = v[:64]
	}
	if v == "" {
		return "prebake (+" + userAgentURL + ")"
	}
	return "prebake/" + v + " (+" + userAgentURL + ")"
}

// withUserAgent is c sending ua as the User-Agent of every request,
// redirects included.
func withUserAgent(c *http.Client, ua string) *http.Client {
	cc := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = uaTransport{base: base, ua: ua}
	return &cc
}

type uaTransport struct {
	base http.RoundTripper
	ua   string
}

// RoundTrip sets the User-Agent on a copy: a RoundTripper must not change
// its request.
func (t uaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("User-Agent", t.ua)
	return t.base.RoundTrip(r2)
}
