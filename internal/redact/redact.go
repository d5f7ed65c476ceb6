// Package redact removes credentials from strings before they reach logs,
// progress, errors or JSON "changes" (see the conventions, "Secrets").
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

const mask = "xxxxx"

// URL removes userinfo and presigned query parameters from a URL. Strings
// that do not parse as URLs are returned with any "user:pass@" removed.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return userinfoRE.ReplaceAllString(s, "$1")
	}
	if u.User != nil {
		u.User = nil
	}
	if u.RawQuery != "" && isPresigned(u.Query()) {
		u.RawQuery = "REDACTED"
	}
	return u.String()
}

// StripUserinfo removes only the userinfo of a URL (lockfiles record the
// repository without credentials).
func StripUserinfo(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

var userinfoRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@`)

func isPresigned(q url.Values) bool {
	for k := range q {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") || lk == "signature" || lk == "sig" || lk == "token" || lk == "x-goog-signature" {
			return true
		}
	}
	return false
}

// String redacts every URL userinfo and presigned query inside free text.
func String(s string) string {
	s = userinfoRE.ReplaceAllString(s, "$1")
	return presignRE.ReplaceAllString(s, "?REDACTED")
}

var presignRE = regexp.MustCompile(`\?[^\s"']*(?i:x-amz-signature|x-amz-credential|signature=)[^\s"']*`)

// secretKey reports whether a Spark conf key holds a secret.
func SecretKey(k string) bool {
	lk := strings.ToLower(k)
	for _, s := range []string{"secret", "password", "oauthtoken", "token", "credentials"} {
		if strings.Contains(lk, s) {
			return true
		}
	}
	return false
}

// Conf returns v, or a mask when the Spark conf key k holds a secret; URLs
// in v are redacted either way.
func Conf(k, v string) string {
	if SecretKey(k) && !strings.HasSuffix(strings.ToLower(k), "file") {
		return mask
	}
	return String(v)
}

// confPairRE finds key=value pairs (as in "--conf k=v" or a logged Spark
// conf) whose key may name a secret.
var confPairRE = regexp.MustCompile(`([A-Za-z0-9_.\-]*(?i:secret|password|token|credentials)[A-Za-z0-9_.\-]*)=([^\s"',]+)`)

// Line redacts a line of free text from another program (spark-submit's or
// the driver's output shown in a log tail): URL userinfo, presigned queries
// (String), and the values of secret conf keys written as key=value.
func Line(s string) string {
	s = String(s)
	return confPairRE.ReplaceAllStringFunc(s, func(m string) string {
		k, v, _ := strings.Cut(m, "=")
		if r := Conf(k, v); r == mask {
			return k + "=" + mask
		}
		return m
	})
}
