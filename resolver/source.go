package resolver

import (
	"context"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
)

// Option configures NewSource, Resolve and FetchLocked.
type Option func(*options) error

type options struct {
	client        *http.Client
	log           Logger
	perHost       int
	attempts      int
	backoff       time.Duration
	maxRetryAfter time.Duration
	idleTimeout   time.Duration
	chain         chainConfig
	chainSet      bool
	checksum      string
	parallel      int
	creds         []string
	offline       bool
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{
		log:           nopLogger{},
		perHost:       32,
		attempts:      4,
		backoff:       200 * time.Millisecond,
		maxRetryAfter: 30 * time.Second,
		idleTimeout:   30 * time.Second,
		parallel:      32,
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if !o.chainSet {
		o.chain = envChainConfig()
	}
	if o.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 4 * o.perHost
		tr.MaxIdleConnsPerHost = o.perHost
		tr.MaxConnsPerHost = o.perHost
		tr.DialContext = (&net.Dialer{Timeout: o.idleTimeout, KeepAlive: 30 * time.Second}).DialContext
		o.client = &http.Client{Transport: tr}
	}
	switch {
	case o.perHost < 1:
		return nil, errors.New("WithMaxPerHost: must be at least 1")
	case o.attempts < 1:
		return nil, errors.New("WithRetry: attempts must be at least 1")
	}
	return o, nil
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// WithHTTPClient sets the client for http(s) repositories. The default is
// one keep-alive client with at most WithMaxPerHost connections per host.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error { o.client = c; return nil }
}

// WithLogger sends progress lines and warnings to l. The default discards them.
func WithLogger(l Logger) Option {
	return func(o *options) error {
		if l != nil {
			o.log = l
		}
		return nil
	}
}

// WithMaxPerHost bounds concurrent requests per host. The default is 32.
func WithMaxPerHost(n int) Option {
	return func(o *options) error { o.perHost = n; return nil }
}

// WithRetry sets the attempts per request and the first backoff (doubled
// each retry, with jitter). The default is 4 attempts from 200ms.
func WithRetry(attempts int, backoff time.Duration) Option {
	return func(o *options) error { o.attempts, o.backoff = attempts, backoff; return nil }
}

// WithMaxRetryAfter caps how long a 429's Retry-After is honoured. The
// default is 30s.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(o *options) error { o.maxRetryAfter = d; return nil }
}

// WithIdleTimeout fails an attempt when no byte arrives for d (connecting,
// headers or body). The default is 30s.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) error { o.idleTimeout = d; return nil }
}

// WithDefaultChain sets what the default chain depends on: the home holding
// .m2/repository ("" drops local-m2-cache) and $DEFAULT_ARTIFACT_REPOSITORY
// ("" means Central and spark-packages). The default reads the environment.
func WithDefaultChain(home, defaultArtifactRepository string) Option {
	return func(o *options) error {
		o.chain = chainConfig{home: home, defaultArtifact: defaultArtifactRepository}
		o.chainSet = true
		return nil
	}
}

// WithChecksumPolicy sets the policy for FetchLocked (Resolve and
// NewSource take it from the Request). The default is ChecksumWarn.
func WithChecksumPolicy(p string) Option {
	return func(o *options) error { o.checksum = p; return nil }
}

// WithParallel bounds concurrent artifact downloads in Resolve and
// FetchLocked. The default is 32.
func WithParallel(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return errors.New("WithParallel: must be at least 1")
		}
		o.parallel = n
		return nil
	}
}

// source implements Source over Spark's chain and the cache.
type source struct {
	chain    []*repo
	cache    *cache
	f        *fetcher
	log      Logger
	offline  bool
	checksum string

	poms    flight[*POMFile]
	files   flight[*CachedFile]
	missing sync.Map // url → struct{}: 404s seen by this source (in memory only)
}

var _ Source = (*source)(nil)

// NewSource returns a Source over Spark's repository chain for req, backed
// by the content-addressed cache req.CacheDir (DefaultCacheDir() if empty).
// It is safe for concurrent use and merges concurrent requests for a file.
func NewSource(ctx context.Context, req Request, opts ...Option) (Source, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return newSource(req, o)
}

func newSource(req Request, o *options) (*source, error) {
	chain, err := buildChain(req, o.chain)
	if err != nil {
		return nil, err
	}
	c, err := openCache(req.CacheDir)
	if err != nil {
		return nil, err
	}
	policy := req.ChecksumPolicy
	if policy == "" {
		policy = ChecksumWarn
	}
	switch policy {
	case ChecksumStrict, ChecksumWarn, ChecksumIgnore:
	default:
		return nil, exitcode.Errorf(exitcode.Usage, "checksum policy %q: must be strict, warn or ignore", policy)
	}
	return &source{
		chain: chain,
		cache: c,
		f: &fetcher{
			client:        o.client,
			log:           o.log,
			attempts:      o.attempts,
			backoff:       o.backoff,
			maxRetryAfter: o.maxRetryAfter,
			idleTimeout:   o.idleTimeout,
			perHost:       o.perHost,
			sems:          map[string]chan struct{}{},
		},
		log:      o.log,
		offline:  req.Offline,
		checksum: policy,
	}, nil
}

// Repositories returns the chain (without userinfo), in lookup order.
func (s *source) Repositories() []Repository {
	out := make([]Repository, len(s.chain))
	for i, r := range s.chain {
		out[i] = r.Repository
	}
	return out
}

// POM implements Source: the first repository of the chain that has the
// POM wins.
func (s *source) POM(ctx context.Context, group, artifact, version string) (*POMFile, error) {
	key := group + ":" + artifact + ":" + version
	return s.poms.do(key, func() (*POMFile, error) {
		rel := modulePath(group, artifact, version) + artifactFileName(artifact, version, "", "pom")
		var tried []string
		var hard error
		for _, r := range s.chain {
			cf, err := s.file(ctx, r, rel)
			if err == nil {
				data, err := os.ReadFile(cf.Path)
				if err != nil {
					return nil, exitcode.New(exitcode.CantCreate, fmt.Errorf("reading cached %s: %w", cf.URL, err))
				}
				return &POMFile{Data: data, Repo: r.Repository, URL: cf.URL}, nil
			}
			tried = append(tried, r.String())
			if errors.Is(err, ErrNotFound) || errors.Is(err, errNotCached) {
				continue
			}
			// Ivy's chain goes on after a failing resolver; the failure is
			// reported if no later repository has the module.
			s.log.Printf("warning: %s: %s", r.Name, redact.String(err.Error()))
			if hard == nil {
				hard = err
			}
		}
		return nil, notFoundErr("module "+key, tried, hard, s.offline)
	})
}

// notFoundErr is the error for a module or file no repository had.
func notFoundErr(what string, tried []string, hard error, offline bool) error {
	list := strings.Join(tried, ", ")
	if hard != nil {
		return exitcode.New(exitcode.Code(hard), fmt.Errorf("%s could not be fetched (tried %s): %w", what, list, hard))
	}
	if offline {
		return exitcode.New(exitcode.Unavailable, fmt.Errorf("%s not found in %s: %w; %w", what, list, errNotCached, ErrNotFound))
	}
	return exitcode.New(exitcode.NotFound, fmt.Errorf("%s not found in %s: %w", what, list, ErrNotFound))
}

// Artifact implements Source: the file comes from ref.Repo, the repository
// that served the module's POM.
func (s *source) Artifact(ctx context.Context, ref ArtifactRef) (*CachedFile, error) {
	r := s.repoFor(ref.Repo)
	if r == nil {
		return nil, exitcode.Errorf(exitcode.Internal, "artifact %s:%s:%s: repository %s (%s) is not in the chain", ref.Group, ref.Artifact, ref.Version, ref.Repo.Name, redact.URL(ref.Repo.URL))
	}
	rel := modulePath(ref.Group, ref.Artifact, ref.Version) + artifactFileName(ref.Artifact, ref.Version, ref.Classifier, ref.Ext)
	cf, err := s.file(ctx, r, rel)
	if err != nil {
		if errors.Is(err, errNotCached) {
			return nil, exitcode.New(exitcode.Unavailable, fmt.Errorf("artifact %s: %w", r.base+rel, err))
		}
		return nil, fmt.Errorf("artifact %s:%s:%s: %w", ref.Group, ref.Artifact, ref.Version, err)
	}
	return cf, nil
}

// repoFor finds the chain entry of a Repository (by name and URL, falling
// back to the URL alone).
func (s *source) repoFor(want Repository) *repo {
	for _, r := range s.chain {
		if r.Name == want.Name && r.URL == want.URL {
			return r
		}
	}
	for _, r := range s.chain {
		if r.URL == redact.StripUserinfo(want.URL) {
			return r
		}
	}
	return nil
}

// file makes r/rel available in the cache: from the index, else by
// download (verified) or by copying a local file.
func (s *source) file(ctx context.Context, r *repo, rel string) (*CachedFile, error) {
	u := r.base + rel
	if _, ok := s.missing.Load(u); ok {
		return nil, exitcode.New(exitcode.NotFound, &HTTPError{URL: u, StatusCode: http.StatusNotFound})
	}
	cf, err := s.files.do(u, func() (*CachedFile, error) {
		if r.isFile() {
			return s.localFile(r, rel)
		}
		if e, ok := s.cache.lookup(u); ok {
			return &CachedFile{Path: s.cache.blobPath(e.Sha256), Sha256: e.Sha256, Size: e.Size, URL: u}, nil
		}
		if s.offline {
			return nil, fmt.Errorf("%s: %w", u, errNotCached)
		}
		return s.download(ctx, r, rel)
	})
	if err != nil && errors.Is(err, ErrNotFound) {
		s.missing.Store(u, struct{}{})
	}
	return cf, err
}

// localFile copies a file of a file: repository into the cache, verifying
// its checksum files like a remote one.
func (s *source) localFile(r *repo, rel string) (*CachedFile, error) {
	u := r.base + rel
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	info, err := os.Stat(p)
	if err != nil || !info.Mode().IsRegular() {
		return nil, exitcode.New(exitcode.NotFound, fmt.Errorf("%s: %w", u, ErrNotFound))
	}
	sum, blob, err := s.cache.putFile(p)
	if err != nil {
		return nil, exitcode.New(exitcode.CantCreate, err)
	}
	if err := s.verify(u, sum, func(ext string) ([]byte, error) {
		data, err := os.ReadFile(p + ext)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return data, err
	}, r.isM2Cache); err != nil {
		return nil, err
	}
	return &CachedFile{Path: blob, Sha256: sum.sha256, Size: sum.size, URL: u}, nil
}

// download GETs r/rel into the cache while fetching its .sha1 in parallel;
// it verifies the checksum before the blob becomes visible under its URL.
func (s *source) download(ctx context.Context, r *repo, rel string) (*CachedFile, error) {
	u := r.base + rel
	type csum struct {
		data []byte
		err  error
	}
	sha1c := make(chan csum, 1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		b := &memBuf{max: 64 << 10}
		err := s.f.get(cctx, r.target(rel+".sha1"), b)
		sha1c <- csum{b.b, err}
	}()

	t, err := s.cache.newTemp()
	if err != nil {
		return nil, err
	}
	defer t.abort()
	if err := s.f.get(ctx, r.target(rel), fileDest{t}); err != nil {
		return nil, err
	}
	sum := t.sums()
	first := true
	if err := s.verify(u, sum, func(ext string) ([]byte, error) {
		if ext == ".sha1" && first {
			first = false
			c := <-sha1c
			return c.data, c.err
		}
		b := &memBuf{max: 64 << 10}
		err := s.f.get(ctx, r.target(rel+ext), b)
		return b.b, err
	}, false); err != nil {
		return nil, err
	}
	blob, err := t.commit()
	if err != nil {
		return nil, err
	}
	e := indexEntry{Sha256: sum.sha256, Size: sum.size}
	if err := s.cache.record(u, e); err != nil {
		return nil, err
	}
	return &CachedFile{Path: blob, Sha256: sum.sha256, Size: sum.size, URL: u}, nil
}

// verify checks a file's digests against its checksum files (.sha1, then
// .sha256, then .md5: the first that exists decides). A mismatch is always
// an error; a missing checksum follows the policy. get returns an error
// matching ErrNotFound when a checksum file does not exist.
func (s *source) verify(u string, sum sums, get func(ext string) ([]byte, error), quietMissing bool) error {
	// Even with ChecksumIgnore a checksum at hand is checked: a mismatch is
	// always an error; only a missing checksum passes silently.
	for _, c := range []struct {
		ext, want string
		n         int
	}{{".sha1", sum.sha1, 40}, {".sha256", sum.sha256, 64}, {".md5", sum.md5, 32}} {
		data, err := get(c.ext)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("checksum %s%s: %w", u, c.ext, err)
		}
		got, ok := parseChecksum(data, c.n)
		if !ok {
			return exitcode.Errorf(exitcode.DataErr, "checksum %s%s: malformed (want %d hex digits)", u, c.ext, c.n)
		}
		if got != c.want {
			return exitcode.New(exitcode.DataErr, fmt.Errorf("%w: %s: %s is %s, the file's is %s", ErrChecksumMismatch, u, c.ext[1:], got, c.want))
		}
		return nil
	}
	switch {
	case s.checksum == ChecksumStrict:
		return exitcode.New(exitcode.DataErr, fmt.Errorf("%w for %s (.sha1, .sha256, .md5) and --checksum-policy=strict", ErrChecksumMissing, u))
	case s.checksum == ChecksumWarn && !quietMissing:
		s.log.Printf("warning: no checksum for %s", u)
	}
	return nil
}

// parseChecksum reads the first field of a checksum file ("hex" or
// "hex  name"), lowercased; ok is false unless it has n hex digits.
func parseChecksum(data []byte, n int) (string, bool) {
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "", false
	}
	h := strings.ToLower(f[0])
	if len(h) != n {
		// Some tools write "name: hex" or "SHA1(name)= hex"; take the last field.
		h = strings.ToLower(f[len(f)-1])
	}
	if len(h) != n {
		return "", false
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", false
	}
	return h, true
}

// Versions implements Source: every version published for g:a in the chain
// (maven-metadata.xml, else a directory listing), in chain order without
// duplicates. Ivy's chain merges the revisions of all its resolvers for a
// dynamic revision.
func (s *source) Versions(ctx context.Context, group, artifact string) ([]string, error) {
	dir := strings.ReplaceAll(group, ".", "/") + "/" + artifact + "/"
	var out, tried []string
	seen := map[string]bool{}
	var hard error
	for _, r := range s.chain {
		vs, err := s.versionsIn(ctx, r, dir)
		tried = append(tried, r.String())
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, errNotCached) {
				s.log.Printf("warning: %s: %s", r.Name, redact.String(err.Error()))
				if hard == nil {
					hard = err
				}
			}
			continue
		}
		for _, v := range vs {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		return nil, notFoundErr("versions of "+group+":"+artifact, tried, hard, s.offline)
	}
	return out, nil
}

type metadata struct {
	Versions []string `xml:"versioning>versions>version"`
}

func (s *source) versionsIn(ctx context.Context, r *repo, dir string) ([]string, error) {
	cf, err := s.file(ctx, r, dir+"maven-metadata.xml")
	if err == nil {
		data, err := os.ReadFile(cf.Path)
		if err != nil {
			return nil, err
		}
		var m metadata
		if err := xml.Unmarshal(data, &m); err != nil {
			return nil, exitcode.Errorf(exitcode.DataErr, "malformed %s: %v", cf.URL, err)
		}
		var vs []string
		for _, v := range m.Versions {
			if v = strings.TrimSpace(v); v != "" {
				vs = append(vs, v)
			}
		}
		return vs, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return s.listing(ctx, r, dir)
}

var hrefRE = regexp.MustCompile(`(?i)href\s*=\s*["']([^"'?#]+)/?["']`)

// listing lists the version directories of r/dir (a local directory, or
// an HTML index as nginx, Apache and Nexus serve them).
func (s *source) listing(ctx context.Context, r *repo, dir string) ([]string, error) {
	if r.isFile() {
		ents, err := os.ReadDir(filepath.Join(r.dir, filepath.FromSlash(dir)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.base+dir, ErrNotFound)
		}
		var vs []string
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				vs = append(vs, e.Name())
			}
		}
		return vs, nil
	}
	if s.offline {
		return nil, fmt.Errorf("%s: %w", r.base+dir, errNotCached)
	}
	b := &memBuf{max: 8 << 20}
	if err := s.f.get(ctx, r.target(dir), b); err != nil {
		return nil, err
	}
	var vs []string
	seen := map[string]bool{}
	for _, m := range hrefRE.FindAllStringSubmatch(string(b.b), -1) {
		v := strings.TrimSuffix(m[1], "/")
		if strings.Contains(v, "://") || strings.HasPrefix(v, "/") {
			v = path.Base(v)
		}
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/") || strings.HasPrefix(v, ".") ||
			strings.HasSuffix(v, ".xml") || strings.HasSuffix(v, ".sha1") || strings.HasSuffix(v, ".md5") || seen[v] {
			continue
		}
		seen[v] = true
		vs = append(vs, v)
	}
	return vs, nil
}

// flight merges concurrent calls for one key and remembers results, except
// transient failures (anything but not-found), which may be retried.
type flight[T any] struct {
	mu sync.Mutex
	m  map[string]*call[T]
}

type call[T any] struct {
	done chan struct{}
	val  T
	err  error
}

func (f *flight[T]) do(key string, fn func() (T, error)) (T, error) {
	f.mu.Lock()
	if f.m == nil {
		f.m = map[string]*call[T]{}
	}
	if c, ok := f.m[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.val, c.err
	}
	c := &call[T]{done: make(chan struct{})}
	f.m[key] = c
	f.mu.Unlock()
	c.val, c.err = fn()
	if c.err != nil && !errors.Is(c.err, ErrNotFound) {
		f.mu.Lock()
		delete(f.m, key)
		f.mu.Unlock()
	}
	close(c.done)
	return c.val, c.err
}
