// Package redact removes credentials from strings before they reach logs,
// progress, errors or JSON "changes" (see the conventions, "Secrets").
package redact

import (
	"bytes"
	"io"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

const mask = "xxxxx"

// URL removes userinfo and presigned query parameters from a URL. Strings
// that do not parse as URLs are returned with any "user:pass@" removed:
// everything between "://" and the last "@" (a password holding "/", "@"
// or a space makes the URL unparsable, and still goes).
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		if i := strings.Index(s, "://"); i >= 0 && strings.LastIndexByte(s, '@') > i {
			return s[:i+3] + s[strings.LastIndexByte(s, '@')+1:]
		}
		return String(s)
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

var schemeRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://`)

// stripUserinfos removes the userinfo of every URL in free text. A URL
// ends at whitespace, a quote, a comma or angle bracket, or the next
// "scheme://". Its userinfo is what precedes the last "@" before the
// first "/", "?" or "#"; or, when a password holds "/" (the authority's
// first ":" not followed by a port), what precedes the URL's last "@".
func stripUserinfos(s string) string {
	var b strings.Builder
	for {
		loc := schemeRE.FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:loc[1]])
		s = s[loc[1]:]
		tok := s
		if end := strings.IndexAny(tok, " \t\r\n\"'`,<>"); end >= 0 {
			tok = tok[:end]
		}
		if m := schemeRE.FindStringIndex(tok); m != nil {
			tok = tok[:m[0]]
		}
		if at := userinfoEnd(tok); at >= 0 {
			s = s[at+1:]
		}
	}
}

// userinfoEnd is the index of the "@" that ends the userinfo of tok (a URL
// after its "scheme://"), or -1.
func userinfoEnd(tok string) int {
	first := strings.IndexAny(tok, "/?#")
	if first < 0 {
		first = len(tok)
	}
	if last := strings.LastIndexByte(tok, '@'); last > first {
		if c := strings.IndexByte(tok[:first], ':'); c >= 0 && !isPort(tok[c+1:first]) {
			return last
		}
	}
	return strings.LastIndexByte(tok[:first], '@')
}

func isPort(s string) bool {
	if s == "" {
		return true
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

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
	s = stripUserinfos(s)
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

// authHeaderRE finds HTTP authorization credentials quoted in text (an API
// server's message, a client's debug log): "Bearer <token>", "Basic <b64>".
// A credential is 8 characters or more with a digit or a symbol, which
// words of a sentence ("basic authentication") are not.
var authHeaderRE = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{8,})`)

func redactAuthHeaders(s string) string {
	return authHeaderRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := authHeaderRE.FindStringSubmatch(m)
		if !strings.ContainsAny(sub[3], "0123456789._~+/=-") {
			return m
		}
		return sub[1] + sub[2] + mask
	})
}

// Line redacts a line of free text from another program or a server
// (spark-submit's or the driver's output, an API server's message): URL
// userinfo, presigned queries (String), authorization credentials, and the
// values of secret conf keys written as key=value.
func Line(s string) string {
	s = String(s)
	s = redactAuthHeaders(s)
	return confPairRE.ReplaceAllStringFunc(s, func(m string) string {
		k, v, _ := strings.Cut(m, "=")
		if r := Conf(k, v); r == mask {
			return k + "=" + mask
		}
		return m
	})
}

// ConfArg redacts a --conf argument as given: the value of a secret key
// (k=v), or, when the "=" is missing, everything after the secret word of
// the key (a mistyped "…oauthToken<TOKEN>" holds the token in its key).
func ConfArg(kv string) string {
	k, v, ok := strings.Cut(kv, "=")
	if ok {
		return k + "=" + Conf(k, v)
	}
	lk := strings.ToLower(k)
	for _, w := range []string{"oauthtoken", "password", "secret", "token", "credentials"} {
		if i := strings.Index(lk, w); i >= 0 && len(k) > i+len(w) && !strings.HasSuffix(lk, "file") {
			return k[:i+len(w)] + mask
		}
	}
	return String(kv)
}

// LineWriter writes what it is given to w a line at a time, each through
// Line: for another program's output streamed to the user (spark-submit's,
// a driver's log). Close writes a last unterminated line.
type LineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	part []byte
}

// NewLineWriter returns a LineWriter over w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexAny(l.part, "\n\r")
		if i < 0 {
			break
		}
		if _, err := io.WriteString(l.w, Line(string(l.part[:i]))+string(l.part[i])); err != nil {
			return len(p), err
		}
		l.part = l.part[i+1:]
	}
	if len(l.part) > 64<<10 { // a very long line: redact what came so far
		_, err := io.WriteString(l.w, Line(string(l.part)))
		l.part = l.part[:0]
		return len(p), err
	}
	return len(p), nil
}

// Close writes the unterminated last line, if any.
func (l *LineWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, Line(string(l.part)))
	l.part = nil
	return err
}
