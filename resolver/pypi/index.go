package pypi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/redirect"
	"github.com/prebake/prebake/internal/retryafter"
)

// Media types of the simple repository API (PEP 691, PEP 503).
const (
	mediaJSON = "application/vnd.pypi.simple.v1+json"
	mediaHTML = "application/vnd.pypi.simple.v1+html"
	// acceptIndex prefers JSON, accepting PEP 503 HTML from an index that
	// does not speak PEP 691.
	acceptIndex = mediaJSON + ", " + mediaHTML + ";q=0.2, text/html;q=0.01"
)

// Limits of the index client.
const (
	// DefaultMaxPage bounds a project page's body (numpy's JSON page is
	// a few MiB).
	DefaultMaxPage = 64 << 20
	// DefaultMaxWheel bounds a downloaded wheel.
	DefaultMaxWheel = 2 << 30
	// DefaultAttempts is how many times a request is tried when the
	// index answers 429, 5xx or the connection fails.
	DefaultAttempts = 3
	// DefaultMaxRetryAfter is the longest wait a Retry-After may ask
	// for (a longer one fails at once), as resolver/repo's default.
	DefaultMaxRetryAfter = 60 * time.Second
)

// IndexFile is one file of a project page.
type IndexFile struct {
	Filename string
	// URL is absolute, without userinfo (the index's credentials are
	// added to a request of the index's own origin).
	URL string
	// Hashes are the page's "name → hex" digests (PEP 503 URL fragment or
	// PEP 691 hashes), names lower case.
	Hashes         map[string]string
	RequiresPython string
	Yanked         bool
	YankedReason   string
	// Size is PEP 700's size, -1 when the page does not say.
	Size int64
}

// ProjectPage is an index's page of one project.
type ProjectPage struct {
	// Index is the index's URL without userinfo.
	Index string
	// URL is the page's URL without userinfo.
	URL   string
	Files []IndexFile
}

// LimitError is an index's 429 (Too Many Requests) or 403 (Forbidden),
// as resolver/repo's RateLimitError is a Maven repository's: a 429 is
// errdefs.RateLimited (exit 76), a 403 errdefs.Denied (exit 77), never a
// missing package. errors.As finds it.
type LimitError struct {
	Index      string // without userinfo
	URL        string // without userinfo
	StatusCode int
	// RetryAfter is the index's Retry-After (0 when it gave none) and At
	// the time it names.
	RetryAfter time.Duration
	At         time.Time
	// MaxWait is the longest wait allowed (WithRetries); TooLong is true
	// when the Retry-After was longer, so nothing was waited.
	MaxWait  time.Duration
	TooLong  bool
	Attempts int
}

func (e *LimitError) Error() string {
	msg := fmt.Sprintf("index %s: GET %s: %d %s", e.Index, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.StatusCode != http.StatusTooManyRequests {
		return msg + ": the index refuses this client (the credentials in the index URL of the machine's pip configuration, or a block)"
	}
	msg += ": the index is rate-limiting this client"
	return msg + retryafter.Advice(e.RetryAfter, e.At, e.MaxWait, e.TooLong, e.Attempts, "or use a mirror named in the machine's pip configuration")
}

// ErrNotSimplePage is matched (errors.Is) by an answer that is not a
// simple API page: an HTML error or login page, JSON that does not parse.
var ErrNotSimplePage = errors.New("not a simple repository API page")

// Client reads simple API pages and downloads files from the configured
// indexes.
type Client struct {
	cfg *IndexConfig
	clientOptions
	// creds are the indexes' userinfo by origin.
	creds map[string]*url.Userinfo
}

// ClientOption configures a Client.
type ClientOption func(*clientOptions) error

type clientOptions struct {
	http          *http.Client
	maxPage       int64
	maxWheel      int64
	attempts      int
	maxRetryAfter time.Duration
	userAgent     string
	log           Logger
}

// WithHTTPClient sets the HTTP client (the default trusts the system's
// CAs plus IndexConfig.Cert).
func WithHTTPClient(c *http.Client) ClientOption {
	return func(o *clientOptions) error { o.http = c; return nil }
}

// WithMaxPage bounds a project page's body.
func WithMaxPage(n int64) ClientOption {
	return func(o *clientOptions) error { o.maxPage = n; return nil }
}

// WithMaxWheel bounds a wheel's size.
func WithMaxWheel(n int64) ClientOption {
	return func(o *clientOptions) error { o.maxWheel = n; return nil }
}

// WithRetries sets the attempts per request and the longest wait a
// Retry-After may ask for: a longer one fails at once (LimitError.TooLong).
func WithRetries(attempts int, maxRetryAfter time.Duration) ClientOption {
	return func(o *clientOptions) error { o.attempts, o.maxRetryAfter = attempts, maxRetryAfter; return nil }
}

// Logger receives the client's retry notes (cache.Logger and
// *progress.Reporter are ones).
type Logger interface {
	Printf(format string, args ...any)
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// WithLogger sets where retries are noted (the default nowhere).
func WithLogger(l Logger) ClientOption {
	return func(o *clientOptions) error { o.log = l; return nil }
}

// WithUserAgent sets the User-Agent of every request (the caller passes
// repo.UserAgent(version), as for Maven repositories; the default is
// "prebake").
func WithUserAgent(ua string) ClientOption {
	return func(o *clientOptions) error { o.userAgent = ua; return nil }
}

// makeClientOptions sets the defaults, then applies opts; the first option
// error stops it.
func makeClientOptions(opts []ClientOption) (*clientOptions, error) {
	o := &clientOptions{maxPage: DefaultMaxPage, maxWheel: DefaultMaxWheel, attempts: DefaultAttempts,
		maxRetryAfter: DefaultMaxRetryAfter, userAgent: "prebake", log: nopLogger{}}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// NewClient returns a client of the indexes cfg names.
func NewClient(cfg *IndexConfig, opts ...ClientOption) (*Client, error) {
	o, err := makeClientOptions(opts)
	if err != nil {
		return nil, err
	}
	cl := &Client{cfg: cfg, clientOptions: *o, creds: map[string]*url.Userinfo{}}
	if cl.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if cfg.Cert != "" {
			pem, err := localfile.Read(cfg.Cert, 16<<20)
			if err != nil {
				return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("pip configuration's cert: %w", err))
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, errdefs.Optionf(errdefs.BadArgument, "cert", "pip configuration's cert %s holds no PEM certificate", cfg.Cert)
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		cl.http = &http.Client{Transport: tr}
	}
	cl.http = redirect.DropCredentials(cl.http)
	if cl.attempts < 1 {
		cl.attempts = 1
	}
	for _, u := range append([]string{cfg.IndexURL}, cfg.ExtraIndexURLs...) {
		if p, err := url.Parse(u); err == nil && p.User != nil {
			cl.creds[p.Scheme+"://"+p.Host] = p.User
		}
	}
	return cl, nil
}

// Project reads the page of project name (normalized) from index (one of
// the configuration's URLs, with its userinfo). A 404 is errdefs.NotFound.
func (cl *Client) Project(ctx context.Context, index, name string) (*ProjectPage, error) {
	base, err := url.Parse(strings.TrimRight(index, "/") + "/")
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "index %s: %v", noUserinfo(index), redact.String(err.Error()))
	}
	page := base.JoinPath(CanonicalName(name) + "/")
	resp, err := cl.get(ctx, noUserinfo(index), page, acceptIndex)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, cl.maxPage+1))
	if err != nil {
		return nil, errdefs.Errorf(errdefs.Unavailable, "index %s: reading %s: %v", noUserinfo(index), noUserinfo(page.String()), redact.String(err.Error()))
	}
	if int64(len(body)) > cl.maxPage {
		return nil, errdefs.Errorf(errdefs.Invalid, "index %s: the page %s is over %d bytes", noUserinfo(index), noUserinfo(page.String()), cl.maxPage)
	}
	final := resp.Request.URL // after redirects
	return parsePage(noUserinfo(index), final, resp.Header.Get("Content-Type"), body)
}

// parsePage reads a JSON (PEP 691) or HTML (PEP 503) project page.
func parsePage(index string, pageURL *url.URL, contentType string, body []byte) (*ProjectPage, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	p := &ProjectPage{Index: index, URL: noUserinfo(pageURL.String())}
	bad := func(format string, args ...any) error {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("index %s: %s: %w: %s", index, p.URL, ErrNotSimplePage, fmt.Sprintf(format, args...)))
	}
	switch {
	case mt == mediaJSON || mt == "application/json":
		var doc struct {
			Meta struct {
				APIVersion string `json:"api-version"`
			} `json:"meta"`
			Files []struct {
				Filename       string            `json:"filename"`
				URL            string            `json:"url"`
				Hashes         map[string]string `json:"hashes"`
				RequiresPython *string           `json:"requires-python"`
				Yanked         json.RawMessage   `json:"yanked"`
				Size           *int64            `json:"size"`
			} `json:"files"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, bad("the JSON does not parse: %v", err)
		}
		if !strings.HasPrefix(doc.Meta.APIVersion, "1.") {
			return nil, bad("api-version %q (want 1.x)", doc.Meta.APIVersion)
		}
		for _, f := range doc.Files {
			file, err := pageFile(pageURL, f.Filename, f.URL)
			if err != nil {
				return nil, bad("%v", err)
			}
			for k, v := range f.Hashes {
				file.Hashes[strings.ToLower(k)] = strings.ToLower(v)
			}
			if f.RequiresPython != nil {
				file.RequiresPython = *f.RequiresPython
			}
			var yb bool
			var ys string
			switch {
			case json.Unmarshal(f.Yanked, &yb) == nil:
				file.Yanked = yb
			case json.Unmarshal(f.Yanked, &ys) == nil:
				file.Yanked, file.YankedReason = true, ys
			}
			if f.Size != nil {
				file.Size = *f.Size
			}
			p.Files = append(p.Files, file)
		}
		return p, nil
	case mt == mediaHTML || mt == "text/html" || mt == "":
		return parseHTMLPage(p, pageURL, body, bad)
	}
	return nil, bad("Content-Type %q", contentType)
}

var (
	anchorRE = regexp.MustCompile(`(?is)<a\s([^>]*)>(.*?)</a\s*>`)
	attrRE   = regexp.MustCompile(`(?is)([a-z_:][-a-z0-9_:.]*)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?`)
	metaRE   = regexp.MustCompile(`(?is)<meta\s[^>]*name\s*=\s*["']pypi:repository-version["']`)
	titleRE  = regexp.MustCompile(`(?is)<title>(.*?)</title>`)
)

// parseHTMLPage reads PEP 503 anchors. A page with neither an anchor nor
// PEP 629's repository-version meta is not a project page (an error or
// login page answered with 200).
func parseHTMLPage(p *ProjectPage, pageURL *url.URL, body []byte, bad func(string, ...any) error) (*ProjectPage, error) {
	anchors := anchorRE.FindAllSubmatch(body, -1)
	if len(anchors) == 0 && !metaRE.Match(body) {
		return nil, bad("an HTML page%s with no file links (an error or login page where a project page was asked for?)", pageTitle(body))
	}
	base := pageURL
	for _, a := range anchors {
		attrs := map[string]string{}
		for _, m := range attrRE.FindAllSubmatch(a[1], -1) {
			v := string(m[2]) + string(m[3]) + string(m[4])
			attrs[strings.ToLower(string(m[1]))] = html.UnescapeString(v)
		}
		href, ok := attrs["href"]
		if !ok {
			continue
		}
		ref, err := url.Parse(href)
		if err != nil {
			continue
		}
		text := strings.TrimSpace(html.UnescapeString(string(a[2])))
		name := text
		if seg := ref.Path[strings.LastIndexByte(ref.Path, '/')+1:]; seg != "" {
			if un, err := url.PathUnescape(seg); err == nil {
				name = un
			}
		}
		file, err := pageFile(base, name, href)
		if err != nil {
			continue // a link that is no file (PEP 503 pages hold only files, others are skipped)
		}
		if frag := ref.Fragment; frag != "" {
			if k, v, ok := strings.Cut(frag, "="); ok {
				file.Hashes[strings.ToLower(k)] = strings.ToLower(v)
			}
		}
		file.RequiresPython = attrs["data-requires-python"]
		if y, ok := attrs["data-yanked"]; ok {
			file.Yanked, file.YankedReason = true, y
		}
		p.Files = append(p.Files, file)
	}
	if !metaRE.Match(body) && !slices.ContainsFunc(p.Files, func(f IndexFile) bool {
		return strings.HasSuffix(f.Filename, ".whl") || isSdistName(f.Filename)
	}) {
		return nil, bad("an HTML page%s whose links are no distribution files (an error or login page where a project page was asked for?)", pageTitle(body))
	}
	return p, nil
}

// pageTitle is ` titled "…"` for an HTML page with a title, else "".
func pageTitle(body []byte) string {
	if m := titleRE.FindSubmatch(body); m != nil {
		return " titled " + strconv.Quote(redact.Cut(strings.TrimSpace(html.UnescapeString(string(m[1]))), 80))
	}
	return ""
}

// pageFile resolves a file's URL against its page, dropping userinfo and
// the fragment.
func pageFile(page *url.URL, filename, href string) (IndexFile, error) {
	if filename == "" || strings.ContainsAny(filename, "/\\\x00") || filename == "." || filename == ".." {
		return IndexFile{}, fmt.Errorf("file name %q", filename)
	}
	ref, err := url.Parse(href)
	if err != nil {
		return IndexFile{}, fmt.Errorf("file %s: URL does not parse", filename)
	}
	u := page.ResolveReference(ref)
	if u.Scheme != "https" && u.Scheme != "http" {
		return IndexFile{}, fmt.Errorf("file %s: URL scheme %q", filename, u.Scheme)
	}
	u.User, u.Fragment, u.RawFragment = nil, "", ""
	return IndexFile{Filename: filename, URL: u.String(), Hashes: map[string]string{}, Size: -1}, nil
}

// get does a GET with retries (429, 5xx, connection errors), adding the
// index's credentials for its own origin. A final 404 or 410 is
// errdefs.NotFound; 429 and 403 a *LimitError; another status
// errdefs.Unavailable.
func (cl *Client) get(ctx context.Context, index string, u *url.URL, accept string) (*http.Response, error) {
	shown := noUserinfo(u.String())
	var last error
	// waited is the time slept on this request's Retry-Afters: the
	// longest wait allowed bounds them in all, as for a Maven repository.
	var waited time.Duration
	for attempt := 0; attempt < cl.attempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, shown, nil)
		if err != nil {
			return nil, errdefs.Errorf(errdefs.BadArgument, "GET %s: %v", shown, redact.String(err.Error()))
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		req.Header.Set("User-Agent", cl.userAgent)
		if ui := cl.creds[req.URL.Scheme+"://"+req.URL.Host]; ui != nil {
			pw, _ := ui.Password()
			req.SetBasicAuth(ui.Username(), pw)
		} else if u.User != nil {
			pw, _ := u.User.Password()
			req.SetBasicAuth(u.User.Username(), pw)
		}
		resp, err := cl.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = errdefs.Errorf(errdefs.Unavailable, "index %s: GET %s: %s", index, shown, redact.String(err.Error()))
			if !cl.wait(ctx, 0, attempt, last, &waited) {
				break
			}
			continue
		}
		switch code := resp.StatusCode; {
		case code == http.StatusOK:
			return resp, nil
		case code == http.StatusNotFound || code == http.StatusGone:
			resp.Body.Close()
			return nil, errdefs.Errorf(errdefs.NotFound, "index %s: GET %s: %d %s", index, shown, code, http.StatusText(code))
		case code == http.StatusForbidden:
			resp.Body.Close()
			return nil, errdefs.New(errdefs.Denied, &LimitError{Index: index, URL: shown, StatusCode: code, Attempts: attempt + 1})
		case code == http.StatusTooManyRequests || code >= 500:
			ra, at := retryAfter(resp.Header.Get("Retry-After"))
			resp.Body.Close()
			tooLong := ra > cl.maxRetryAfter-waited
			if code == http.StatusTooManyRequests {
				last = errdefs.New(errdefs.RateLimited, &LimitError{Index: index, URL: shown, StatusCode: code,
					RetryAfter: ra, At: at, MaxWait: cl.maxRetryAfter, TooLong: tooLong, Attempts: attempt + 1})
			} else {
				last = errdefs.Errorf(errdefs.Unavailable, "index %s: GET %s: %d %s", index, shown, code, http.StatusText(code))
			}
			if tooLong || !cl.wait(ctx, ra, attempt, last, &waited) {
				return nil, last
			}
		case code == http.StatusUnauthorized:
			resp.Body.Close()
			return nil, errdefs.Errorf(errdefs.Denied, "index %s: GET %s: 401 Unauthorized (credentials go in the index URL of the machine's pip configuration)", index, shown)
		default:
			resp.Body.Close()
			return nil, errdefs.Errorf(errdefs.Unavailable, "index %s: GET %s: %d %s", index, shown, code, http.StatusText(code))
		}
	}
	return nil, last
}

// wait sleeps before the next attempt (the Retry-After, else a short
// backoff), false when there is none or ctx ended; a Retry-After's wait is
// added to waited.
func (cl *Client) wait(ctx context.Context, retryAfter time.Duration, attempt int, why error, waited *time.Duration) bool {
	if attempt+1 >= cl.attempts {
		return false
	}
	d := retryAfter
	if d <= 0 {
		d = min(time.Duration(200*(attempt+1))*time.Millisecond, cl.maxRetryAfter)
	} else {
		d = min(d, cl.maxRetryAfter-*waited)
		*waited += d
	}
	if dl, ok := ctx.Deadline(); ok && time.Now().Add(d).After(dl) {
		return false // a wait that would pass the deadline is not started
	}
	cl.log.Printf("%v; retrying in %s (attempt %d of %d)", why, d.Round(time.Millisecond), attempt+2, cl.attempts)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryAfter reads a Retry-After (seconds or an HTTP date): the wait and
// when it ends; 0 when absent, unreadable or past.
func retryAfter(v string) (time.Duration, time.Time) {
	now := time.Now()
	d := retryafter.Parse(v, now)
	if d <= 0 {
		return 0, time.Time{}
	}
	return d, now.Add(d)
}

// isDir reports whether path is a directory (a find-links entry).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
