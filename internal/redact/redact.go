// Package redact removes credentials from strings before they reach logs,
// progress, errors or JSON "changes" (see the conventions, "Secrets").
package redact

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
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
	return knownSecrets(u.String())
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

// String redacts every URL userinfo and presigned query inside free text,
// and every known secret (AddSecret).
func String(s string) string {
	s = stripUserinfos(s)
	return knownSecrets(presignRE.ReplaceAllString(s, "?REDACTED"))
}

// MinSecret is the shortest value AddSecret masks: a shorter one would mask
// common words and numbers everywhere.
const MinSecret = 6

var known struct {
	sync.RWMutex
	vals map[string]bool
	r    *strings.Replacer // nil: none
}

// AddSecret registers a secret value prebake was given (a token, a token
// file's content, a password) so that every redaction masks it wherever it
// appears, in whatever form the text quotes it (a server echoing the token,
// a header dump). Surrounding whitespace is dropped; values shorter than
// MinSecret are ignored. It is safe for concurrent use.
func AddSecret(v string) {
	v = strings.TrimSpace(v)
	if len(v) < MinSecret {
		return
	}
	known.Lock()
	defer known.Unlock()
	if known.vals[v] {
		return
	}
	if known.vals == nil {
		known.vals = map[string]bool{}
	}
	known.vals[v] = true
	vals := make([]string, 0, len(known.vals))
	for k := range known.vals {
		vals = append(vals, k)
	}
	// Longest first, so that a secret holding another is masked whole.
	sort.Slice(vals, func(i, j int) bool {
		return len(vals[i]) > len(vals[j]) || len(vals[i]) == len(vals[j]) && vals[i] < vals[j]
	})
	pairs := make([]string, 0, 2*len(vals))
	for _, k := range vals {
		pairs = append(pairs, k, mask)
	}
	known.r = strings.NewReplacer(pairs...)
}

// AddConfSecrets registers (AddSecret) the value of each key of a Spark
// conf that Conf masks, but for values that would mask ordinary text
// wherever it appears: shorter than 8 characters, a boolean or a number,
// and the names and mount paths of K8s secrets
// (spark.kubernetes.*.secrets.NAME=/path, *.secretKeyRef.ENV=name:key),
// which are not secret. Key-based redaction still masks those keys' values.
func AddConfSecrets(conf map[string]string) {
	for k, v := range conf {
		lk := strings.ToLower(k)
		if Conf(k, v) != mask || len(strings.TrimSpace(v)) < 8 || strings.Contains(lk, ".secrets.") || strings.Contains(lk, ".secretkeyref.") ||
			strings.HasSuffix(lk, "enabled") || isBoolOrNumber(strings.TrimSpace(v)) {
			continue
		}
		AddSecret(v)
	}
}

func isBoolOrNumber(v string) bool {
	if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		return true
	}
	_, err := strconv.ParseFloat(v, 64)
	return err == nil
}

func knownSecrets(s string) string {
	known.RLock()
	r := known.r
	known.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
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
// A credential is 8 characters or more. A Basic one needs a digit or a
// symbol, which words of a sentence ("basic authentication") lack; a Bearer
// one is any such word but the few a sentence puts after "bearer".
var authHeaderRE = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{8,})`)

// bearerWords are the words after "bearer" that are not a token.
var bearerWords = map[string]bool{"authentication": true, "authorization": true, "credentials": true, "credential": true, "required": true, "challenge": true}

func redactAuthHeaders(s string) string {
	return authHeaderRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := authHeaderRE.FindStringSubmatch(m)
		symbol := strings.ContainsAny(sub[3], "0123456789._~+/=-")
		if !symbol && (strings.EqualFold(sub[1], "basic") || bearerWords[strings.ToLower(sub[3])]) {
			return m
		}
		return sub[1] + sub[2] + mask
	})
}

// The other ways a program prints a secret key's value: JSON
// ("password": "X"), YAML or a log (password: X), a Scala tuple of a conf
// dump ((spark.hadoop.fs.s3a.secret.key,X)).
var (
	secretKeyPat = `[A-Za-z0-9_.\-]*(?i:secret|password|passwd|token|credentials)[A-Za-z0-9_.\-]*`
	jsonPairRE   = regexp.MustCompile(`"(` + secretKeyPat + `)"(\s*:\s*)"((?:[^"\\]|\\.)*)"`)
	colonPairRE  = regexp.MustCompile(`\b(` + secretKeyPat + `)(:[ \t]+)([^\s"',;)}\]]+)`)
	tuplePairRE  = regexp.MustCompile(`\((` + secretKeyPat + `),([^)\s]*)\)`)
	// spacedPairRE is key = value with blanks around "=", as an INI file
	// writes it (~/.aws/credentials: aws_secret_access_key = …).
	spacedPairRE = regexp.MustCompile(`\b(` + secretKeyPat + `)([ \t]+=[ \t]*|=[ \t]+)([^\s"',;)}\]]+)`)
)

// proseWords are the words that follow "credentials: " or "token: " in a
// sentence (prebake's own messages among them: "the repositories carry
// credentials: this run …", "…/aws-credentials: line 1: …"): such a value
// is prose, not a secret, and stays.
var proseWords = map[string]bool{
	"a": true, "an": true, "the": true, "this": true, "that": true, "these": true, "those": true, "it": true, "its": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "not": true, "no": true, "none": true,
	"null": true, "nil": true, "empty": true, "missing": true, "required": true, "invalid": true, "expired": true,
	"unset": true, "given": true, "line": true, "from": true, "for": true, "in": true, "on": true, "of": true,
	"to": true, "and": true, "or": true, "with": true, "without": true, "see": true, "use": true, "using": true,
	"run": true, "when": true, "if": true, "only": true, "any": true, "all": true, "each": true, "must": true,
	"may": true, "will": true, "would": true, "can": true, "cannot": true, "has": true, "have": true, "had": true,
	"unknown": true, "denied": true, "refused": true, "rejected": true, "failed": true, "unauthorized": true,
	"forbidden": true, "redacted": true, "hidden": true, "xxxxx": true, "there": true, "they": true, "we": true,
	"you": true, "your": true, "our": true, "their": true, "which": true, "what": true, "how": true, "so": true,
}

// redactPairs masks the value of each match of re whose key (submatch 1)
// names a secret; value is the submatch index of the value.
func redactPairs(re *regexp.Regexp, s string, value int) string {
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.FindStringSubmatchIndex(m)
		k, v := m[sub[2]:sub[3]], m[sub[2*value]:sub[2*value+1]]
		if v == "" || v == mask || Conf(k, v) != mask || proseWords[strings.ToLower(v)] {
			return m
		}
		return m[:sub[2*value]] + mask + m[sub[2*value+1]:]
	})
}

// Line redacts a line of free text from another program or a server
// (spark-submit's or the driver's output, an API server's message): URL
// userinfo, presigned queries and known secrets (String), authorization
// credentials, and the values of secret keys written as key=value,
// "key": "value", key: value or (key,value).
func Line(s string) string {
	s = String(s)
	s = redactAuthHeaders(s)
	s = redactPairs(jsonPairRE, s, 3)
	s = redactPairs(colonPairRE, s, 3)
	s = redactPairs(spacedPairRE, s, 3)
	s = redactPairs(tuplePairRE, s, 2)
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

// MaxMessage is how much of a server's message prebake prints (an S3 or
// REST error message, which a server may make megabytes long).
const MaxMessage = 600

// Cut bounds s, a message from a server, to n bytes (on a character
// boundary), saying how long it was when cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
}

// MaxResultMessage bounds each message from a driver, an operator or a
// server that a result keeps (a container's termination message, an
// operator's errorMessage, a REST master's or a Spark Connect server's
// message): Kubernetes itself keeps at most 4096 bytes of a termination
// message.
const MaxResultMessage = 4096

// Message is what a result keeps of a message from a driver, an operator
// or a server: redacted line by line (Line) and bounded to
// MaxResultMessage bytes, marker included (MessageN).
func Message(s string) string { return MessageN(s, MaxResultMessage) }

// MessageN redacts s line by line (Line) and keeps at most n bytes of the
// result, marker included: a cut one ends with "… [M bytes, cut to K]"
// (M the message's length, K what is kept; whole UTF-8 characters). Trailing
// newlines go. Only the first 16·n bytes of a longer s are read (up to
// their last blank, so that no secret is redacted in part): the rest would
// be cut anyway.
func MessageN(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	total, read := len(s), len(s)
	if total > 16*n {
		read = max(0, strings.LastIndexAny(s[:16*n], " \t\r\n"))
	}
	lines := strings.Split(s[:read], "\n")
	for i, l := range lines {
		lines[i] = Line(l)
	}
	s = strings.Join(lines, "\n")
	if read == total && len(s) <= n {
		return s
	}
	keep := min(len(s), max(0, n-len(fmt.Sprintf("… [%d bytes, cut to %d]", total, n))))
	for keep > 0 && keep < len(s) && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s… [%d bytes, cut to %d]", s[:keep], total, keep)
}

// CutError is err with its message bounded to MaxMessage bytes (Cut); the
// chain is kept for errors.Is and errors.As.
func CutError(err error) error {
	if err == nil {
		return nil
	}
	return &cutError{err: err}
}

type cutError struct{ err error }

func (e *cutError) Error() string { return Cut(e.err.Error(), MaxMessage) }
func (e *cutError) Unwrap() error { return e.err }
