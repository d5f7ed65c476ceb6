package repo

import (
	"bytes"
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
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/ivysettings"
	"github.com/prebake/prebake/resolver/mavensettings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/noanswer"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/redirect"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

// Option configures how NewSource, Resolve, LockFor and FetchLocked work
// (transport, retries, parallelism, logging); what they resolve or fetch,
// and from where, is their Config. Options are
// pure setters: their order does not matter, and files are read by the
// functions, never by an option.
type Option func(*options) error

type options struct {
	client       *http.Client
	log          Logger
	perHost      int
	attempts     int
	backoff      time.Duration
	maxRetryWait time.Duration
	idleTimeout  time.Duration
	userAgent    string                 // WithUserAgent
	central      func(host string) bool // nil: isCentralHost (tests replace it)
	slow         noanswer.Limits        // metadata deadline and minimum rate (see makeOptions)
	maxArtifact  int64                  // cap of an artifact no lock gives the size of
	parallel     int
	progress     Progress // WithProgress; nil reports nothing
	// loadSettings and loadIvy read Config.Settings and IvySettings;
	// tests count the reads (WithSettingsLoaders).
	loadSettings func(path, home string, lookup func(string) (string, bool)) (*mavensettings.Settings, error)
	loadIvy      func(ctx context.Context, spec string, env ivysettings.Env) (*ivysettings.Settings, error)
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{
		log:          nopLogger{},
		perHost:      64,
		attempts:     4,
		backoff:      200 * time.Millisecond,
		maxRetryWait: DefaultMaxRetryWait,
		userAgent:    UserAgent(""),
		idleTimeout:  30 * time.Second,
		// Like curl's low-speed limit: a POM, metadata, checksum or listing
		// must arrive whole within 60s; any body (a jar too) must bring
		// 1 KiB/s over 30s. A trickling repository fails the attempt (then
		// retried), where the idle timeout alone is reset by every byte.
		slow: noanswer.Limits{What: "repository", Deadline: noanswer.DefaultDeadline,
			MinRate: noanswer.DefaultMinRate, Window: noanswer.DefaultWindow},
		maxArtifact:  DefaultMaxArtifactSize,
		parallel:     32,
		loadSettings: mavensettings.Load,
		loadIvy:      ivysettings.Load,
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 4 * o.perHost
		tr.MaxIdleConnsPerHost = o.perHost
		tr.MaxConnsPerHost = o.perHost
		tr.DialContext = (&net.Dialer{Timeout: o.idleTimeout, KeepAlive: 30 * time.Second}).DialContext
		o.client = &http.Client{Transport: tr}
	}
	o.client = withUserAgent(redirect.DropCredentials(o.client), o.userAgent)
	switch {
	case o.perHost < 1:
		return nil, errdefs.Optionf(errdefs.BadArgument, "resolver.WithMaxPerHost", "WithMaxPerHost: must be at least 1")
	case o.attempts < 1:
		return nil, errdefs.Optionf(errdefs.BadArgument, "resolver.WithRetry", "WithRetry: attempts must be at least 1")
	case o.maxRetryWait < 0:
		return nil, errdefs.Optionf(errdefs.BadArgument, "resolver.Request.MaxRetryWait", "the longest wait for a throttled repository must not be negative (0 waits for none)")
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

// WithMaxPerHost bounds concurrent requests per host. The default is 64.
func WithMaxPerHost(n int) Option {
	return func(o *options) error { o.perHost = n; return nil }
}

// WithRetry sets the attempts per request and the first backoff (doubled
// each retry, with jitter). The default is 4 attempts from 200ms.
func WithRetry(attempts int, backoff time.Duration) Option {
	return func(o *options) error { o.attempts, o.backoff = attempts, backoff; return nil }
}

// DefaultMaxRetryWait is how long, in all, one request waits for the
// Retry-After of a 429 or 503 by default.
const DefaultMaxRetryWait = 60 * time.Second

// WithMaxRetryWait bounds how long, in all, one request waits for the
// Retry-After of a 429 or 503: a Retry-After that would pass it (Maven
// Central's IP blocks say 1800 seconds) fails at once, naming it, instead
// of sleeping. 0 never waits for a Retry-After. The default is
// DefaultMaxRetryWait.
func WithMaxRetryWait(d time.Duration) Option {
	return func(o *options) error { o.maxRetryWait = d; return nil }
}

// WithUserAgent sets the User-Agent of every repository request (see
// UserAgent). The default is UserAgent("").
func WithUserAgent(ua string) Option {
	return func(o *options) error {
		if ua != "" {
			o.userAgent = ua
		}
		return nil
	}
}

// withCentralHosts makes hosts (host:port) count as Maven Central's
// (tests: the per-host budget and the 403 retry).
func withCentralHosts(hosts ...string) Option {
	return func(o *options) error {
		o.central = func(h string) bool { return slices.Contains(hosts, h) || isCentralHost(h) }
		return nil
	}
}

// WithIdleTimeout fails an attempt when no byte arrives for d (connecting,
// headers or body). The default is 30s.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) error { o.idleTimeout = d; return nil }
}

// WithSlowLimits sets the metadata deadline (a POM, metadata, checksum or
// listing must arrive whole within it) and the minimum rate of any body
// over window. The defaults are 60s and 1 KiB/s over 30s.
func WithSlowLimits(deadline time.Duration, minRate int64, window time.Duration) Option {
	return func(o *options) error {
		o.slow.Deadline, o.slow.MinRate, o.slow.Window = deadline, minRate, window
		return nil
	}
}

// WithMaxArtifactSize sets the cap of an artifact no lock gives the size
// of. The default is DefaultMaxArtifactSize.
func WithMaxArtifactSize(n int64) Option {
	return func(o *options) error { o.maxArtifact = n; return nil }
}

// WithSettingsLoaders replaces the readers of Config.Settings and
// IvySettings (by default mavensettings.Load and ivysettings.Load), as
// tests do to count the reads.
func WithSettingsLoaders(settings func(path, home string, lookup func(string) (string, bool)) (*mavensettings.Settings, error),
	ivy func(ctx context.Context, spec string, env ivysettings.Env) (*ivysettings.Settings, error)) Option {
	return func(o *options) error { o.loadSettings, o.loadIvy = settings, ivy; return nil }
}

// WithParallel bounds concurrent artifact downloads in Resolve and
// FetchLocked. The default is 32.
func WithParallel(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return errdefs.Optionf(errdefs.BadArgument, "resolver.WithParallel", "WithParallel: must be at least 1")
		}
		o.parallel = n
		return nil
	}
}

// source implements Source over Spark's chain and the cache.
type Source struct {
	chain    []*entry
	cache    *cache.Cache
	f        *fetcher
	log      Logger
	offline  bool
	parallel int // WithParallel: downloads at a time
	checksum ChecksumPolicy

	poms    flight[*pomResult]
	files   flight[*fetched]
	metas   flight[[]byte] // SNAPSHOT maven-metadata.xml by URL (snapshot.go)
	missing sync.Map       // url → struct{}: 404s seen by this source (in memory only)
	noSha1  sync.Map       // repo base → struct{}: its last checked file had no .sha1 (fetchChecksums)
	warned  sync.Map       // warning → struct{}: each is printed once
	refused sync.Map       // "" → error: what the chain cannot reproduce (ivysettings_chain.go), however the graph took it

	// Speculation (see speculate): specStop is nil unless Resolve enabled
	// it, and closed when it stops or Resolve's context ends; specDeadline
	// is that context's deadline (zero if none).
	specMu       sync.Mutex
	specStop     chan struct{}
	specDeadline time.Time
	specStopped  bool
	specWG       sync.WaitGroup
}

// pomResult is a POM lookup with the warnings met on the way, printed by
// the first caller that is not speculative.
type pomResult struct {
	pf       *POMFile
	warnings []string
}

// fetched is a file in the cache; warn is set when it had no checksum.
type fetched struct {
	cf   *CachedFile // Path "" for a file: repository's POM until materialized
	warn string
	data []byte // the body, when download kept it in memory (POMs)

	sums   cache.Sums // of data, when cf.Path is ""
	once   sync.Once
	mat    *CachedFile
	matErr error
}

// asker says who asks the source for a file: the graph builder (the zero
// value) or speculation. It travels as an argument, never in a context.
type asker struct {
	// spec: speculation asks; warnings are left to the first caller that
	// really needs the file.
	spec bool
	// low: the requests are speculative for the per-host limit (hostSem):
	// they hold at most half the slots and yield to the others.
	low bool
	// onBody, when set, is called by download with a POM's body as soon
	// as it has arrived.
	onBody func([]byte)
}

// warn prints each warning once per source, unless a is speculation.
func (s *Source) warn(a asker, msgs ...string) {
	if a.spec {
		return
	}
	for _, m := range msgs {
		if m == "" {
			continue
		}
		if _, seen := s.warned.LoadOrStore(m, struct{}{}); !seen {
			s.log.Printf("warning: %s", m)
		}
	}
}

// NewSource returns a Source over Spark's repository chain for req, backed
// by the content-addressed cache req.CacheDir (cache.DefaultDir if empty).
// It is safe for concurrent use and merges concurrent requests for a file.
func NewSource(ctx context.Context, req Config, opts ...Option) (*Source, error) {
	c, err := NewChain(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	return c.NewSource(req)
}

// newSource is the Source of req over chain (built once by the caller).
func newSource(req Config, chain []*entry, o *options) (*Source, error) {
	c, err := cache.Open(req.CacheDir, privateChain(chain), o.log)
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
		return nil, errdefs.Errorf(errdefs.BadArgument, "checksum policy %q: must be strict, warn or ignore", policy)
	}
	return &Source{
		chain:    chain,
		cache:    c,
		f:        newFetcher(o),
		log:      o.log,
		offline:  req.Offline,
		parallel: o.parallel,
		checksum: policy,
	}, nil
}

// RefusedErr is the first request the chain refused to answer because
// prebake could not reproduce it (ivysettings_chain.go), else nil: the
// graph may have taken it for a miss.
func (s *Source) RefusedErr() error {
	if err, ok := s.refused.Load(""); ok {
		return err.(error)
	}
	return nil
}

// Repositories returns the chain (without userinfo), in lookup order.
func (s *Source) Repositories() []Repository {
	out := make([]Repository, len(s.chain))
	for i, r := range s.chain {
		out[i] = r.Repository
	}
	return out
}

// POM implements Source: the first repository of the chain that has the
// POM wins.
func (s *Source) POM(ctx context.Context, group, artifact, version string) (*POMFile, error) {
	return s.pom(ctx, asker{}, group, artifact, version)
}

func (s *Source) pom(ctx context.Context, a asker, group, artifact, version string) (*POMFile, error) {
	if err := checkModule(group, artifact, version); err != nil {
		return nil, err
	}
	key := group + ":" + artifact + ":" + version
	res, err := s.poms.do(key, func() (*pomResult, error) {
		var m misses
		res := &pomResult{}
		for _, r := range s.chain {
			pf, warn, fatal, err := s.pomFrom(ctx, a, r, group, artifact, version)
			if err == nil {
				res.warnings = append(res.warnings, warn)
				res.pf = pf
				return res, nil
			}
			if fatal {
				return res, err
			}
			// Ivy's chain goes on after a failing resolver; the failure is
			// reported if no later repository has the module.
			if m.add(r, err) {
				res.warnings = append(res.warnings, r.Name+": "+redact.String(err.Error()))
			}
		}
		return res, m.err("module " + key)
	})
	if res != nil {
		s.warn(a, res.warnings...)
	}
	if err != nil {
		return nil, err
	}
	return res.pf, nil
}

// pomFrom fetches the POM of g:a:v from r alone; warn is its
// missing-checksum warning, if any. A fatal error (the cache is unreadable)
// stops the chain.
func (s *Source) pomFrom(ctx context.Context, a asker, r *entry, group, artifact, version string) (pf *POMFile, warn string, fatal bool, err error) {
	fa, hooked := a, false
	if !r.isFile() && s.speculating() {
		fa.onBody = func(data []byte) {
			hooked = true
			s.speculate(ctx, r, group, artifact, version, data, !a.spec)
		}
	}
	var f *fetched
	rels, err := s.relPaths(ctx, a, r, group, artifact, version, "", "pom")
	if err != nil {
		return nil, "", true, err
	}
	for _, rel := range rels {
		if f, err = s.fetch(ctx, fa, r, rel); err == nil || !errors.Is(err, ErrNotFound) {
			break
		}
	}
	if err != nil {
		return nil, "", false, err
	}
	data := f.data
	if data == nil {
		if err := checkSize(f.cf.URL, f.cf.Size, MaxPOMSize); err != nil {
			return nil, "", true, err
		}
		if data, err = os.ReadFile(f.cf.Path); err != nil {
			return nil, "", true, errdefs.New(errdefs.CantWrite, fmt.Errorf("reading cached %s: %w", f.cf.URL, err))
		}
	}
	if fa.onBody != nil && !hooked {
		s.speculate(ctx, r, group, artifact, version, data, !a.spec)
	}
	return &POMFile{Data: data, Repo: r.Repository, URL: f.cf.URL}, f.warn, false, nil
}

// POMIn returns the POM of g:a:v from want alone (a dynamic revision's
// winning repository, see repoVersioner).
func (s *Source) POMIn(ctx context.Context, want Repository, group, artifact, version string) (*POMFile, error) {
	if err := checkModule(group, artifact, version); err != nil {
		return nil, err
	}
	r := s.repoFor(want)
	if r == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "module %s:%s:%s: repository %s (%s) is not in the chain", group, artifact, version, want.Name, redact.URL(want.URL))
	}
	pf, warn, fatal, err := s.pomFrom(ctx, asker{}, r, group, artifact, version)
	if err != nil {
		if !fatal && (errors.Is(err, ErrNotFound) || errors.Is(err, cache.ErrNotCached)) {
			var m misses
			m.add(r, err)
			return nil, m.err("module " + group + ":" + artifact + ":" + version)
		}
		return nil, fmt.Errorf("module %s:%s:%s in %s: %w", group, artifact, version, r.Name, err)
	}
	s.warn(asker{}, warn)
	return pf, nil
}

// VersionsIn implements repoVersioner: the versions r lists for g:a.
func (s *Source) VersionsIn(ctx context.Context, want Repository, group, artifact string) ([]string, error) {
	if err := checkModule(group, artifact, ""); err != nil {
		return nil, err
	}
	r := s.repoFor(want)
	if r == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "versions of %s:%s: repository %s (%s) is not in the chain", group, artifact, want.Name, redact.URL(want.URL))
	}
	vs, err := s.versionsIn(ctx, r, group, artifact)
	if err != nil {
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, cache.ErrNotCached) {
			s.warn(asker{}, r.Name+": "+redact.String(err.Error()))
		}
		return nil, err
	}
	return vs, nil
}

// speculate starts, in the background, the downloads that a module's POM
// makes likely, so that they overlap with the graph walk instead of
// following it:
//
//   - the parent POM: the loader needs it before it can use this one;
//   - when the packaging is jar or bundle, the module's jar and its
//     checksum: Resolve needs it unless the module loses a conflict (a
//     speculative jar nobody needed is left in the cache). These requests
//     have a low priority for the per-host limit (hostSem);
//   - when deps is set (the POM was asked for by the graph builder, not by
//     speculation, so speculation goes one level beyond what the builder
//     knows), the POMs of its compile/runtime, non-optional dependencies
//     with a literal version: the builder can only name them once the
//     parent chain has arrived, which may be several round trips later.
//     Dependency management or an exclusion may make one of them unneeded.
//
// Results are shared through the source's merged requests; speculation
// changes which requests overlap, never what is resolved. It does nothing
// unless Resolve enabled it (StartSpeculation).
func (s *Source) speculate(ctx context.Context, r *entry, group, artifact, version string, data []byte, deps bool) {
	if !s.speculating() {
		return
	}
	h, err := maven.Peek(data)
	if err != nil {
		return // the loader reports it
	}
	if p := h.Parent; p != nil && literal(*p) {
		s.goSpec(ctx, func(ctx context.Context) { s.pom(ctx, specAsker, p.Group, p.Artifact, p.Version) })
	}
	switch h.Packaging {
	case "", "jar", "bundle":
		ref := ArtifactRef{Group: group, Artifact: artifact, Version: version, Ext: "jar", Repo: r.Repository}
		s.goSpec(ctx, func(ctx context.Context) { s.artifact(ctx, asker{spec: true, low: true}, ref) })
	}
	if ds := specDeps(h); deps && len(ds) > 0 {
		s.goSpec(ctx, func(ctx context.Context) { s.speculateDeps(ctx, version, ds, h) })
	}
}

// speculateDeps fetches the POMs of a module's dependencies as soon as
// their versions are known: a literal version at once; a managed one or
// one made of properties as soon as the parent chain, walked as its POMs
// arrive, gives a literal value (nearest first, Ivy's first-set-wins for
// properties). It only guesses: the graph builder decides, and a wrong
// guess costs a request, never a result.
func (s *Source) speculateDeps(ctx context.Context, version string, deps []maven.Coord, h maven.Hints) {
	props := map[string]string{"project.version": version, "pom.version": version, "version": version}
	pending := map[string]string{} // "g:a" → raw version, "" if managed
	for _, d := range deps {
		pending[d.Group+":"+d.Artifact] = d.Version
	}
	for level := 0; level < 16 && len(pending) > 0; level++ {
		for k, v := range h.Properties {
			if _, set := props[k]; !set {
				props[k] = v
			}
		}
		for _, d := range deps {
			key := d.Group + ":" + d.Artifact
			raw, ok := pending[key]
			if !ok {
				continue
			}
			if raw == "" {
				raw = managedVersion(h, key)
				pending[key] = raw
			}
			if v, ok := interpolateLiteral(raw, props); ok {
				delete(pending, key)
				s.goSpec(ctx, func(ctx context.Context) { s.pom(ctx, specAsker, d.Group, d.Artifact, v) })
			}
		}
		if len(pending) == 0 || h.Parent == nil || !literal(*h.Parent) {
			return
		}
		pf, err := s.pom(ctx, specAsker, h.Parent.Group, h.Parent.Artifact, h.Parent.Version)
		if err != nil {
			return
		}
		if h, err = maven.Peek(pf.Data); err != nil {
			return
		}
	}
}

var propRE = regexp.MustCompile(`\$\{([^}]+)\}`)

// interpolateLiteral expands ${...} from props; ok is false unless the
// result is a literal version. It gives up past maven.MaxExpansion bytes
// (the loader then refuses the POM).
func interpolateLiteral(v string, props map[string]string) (string, bool) {
	for i := 0; i < 8 && strings.Contains(v, "${"); i++ {
		changed, n := false, len(v)
		v = propRE.ReplaceAllStringFunc(v, func(m string) string {
			if x, ok := props[m[2:len(m)-1]]; ok && n <= maven.MaxExpansion {
				changed = true
				n += len(x)
				return x
			}
			return m
		})
		if n > maven.MaxExpansion {
			return "", false
		}
		if !changed {
			break
		}
	}
	return v, v != "" && !strings.Contains(v, "${") && !strings.ContainsAny(v, "[](),")
}

// StartSpeculation enables speculate until the returned stop is called;
// stop cancels the speculative downloads still running and waits for them.
// Its downloads end when stop is called or ctx ends, whichever first.
func (s *Source) StartSpeculation(ctx context.Context) (stop func()) {
	if s.offline {
		return func() {}
	}
	ch := make(chan struct{})
	var once sync.Once
	end := func() { once.Do(func() { close(ch) }) }
	unlink := context.AfterFunc(ctx, end)
	s.specMu.Lock()
	s.specStop = ch
	s.specDeadline, _ = ctx.Deadline()
	s.specMu.Unlock()
	return func() {
		s.specMu.Lock()
		s.specStopped = true
		s.specMu.Unlock()
		unlink()
		end()
		s.specWG.Wait()
	}
}

func (s *Source) speculating() bool {
	s.specMu.Lock()
	defer s.specMu.Unlock()
	return s.specStop != nil && !s.specStopped
}

// goSpec runs fn in the background. fn's context has ctx's values, not
// its end: the caller's request may finish first, and a speculative
// download another caller waits for (flight) must go on. It ends when
// speculation stops (StartSpeculation) and keeps Resolve's deadline.
func (s *Source) goSpec(ctx context.Context, fn func(ctx context.Context)) {
	s.specMu.Lock()
	if s.specStop == nil || s.specStopped {
		s.specMu.Unlock()
		return
	}
	stop, deadline := s.specStop, s.specDeadline
	s.specWG.Add(1)
	s.specMu.Unlock()
	go func() {
		defer s.specWG.Done()
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		if !deadline.IsZero() {
			cancel()
			sctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
		}
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-sctx.Done():
			}
		}()
		fn(sctx)
	}()
}

// specAsker is speculation asking for a POM.
var specAsker = asker{spec: true}

// literal reports whether c names one module revision as written: no
// property to expand, no version range.
func literal(c maven.Coord) bool {
	return c.Group != "" && c.Artifact != "" && c.Version != "" &&
		!strings.Contains(c.Group+c.Artifact+c.Version, "${") && !strings.ContainsAny(c.Version, "[](),")
}

// specDeps are the dependencies speculation follows: named, compile or
// runtime scope, not optional (as written, first of a groupId:artifactId).
func specDeps(h maven.Hints) []maven.Coord {
	var out []maven.Coord
	seen := map[string]bool{}
	for _, d := range h.Dependencies {
		key := d.Group + ":" + d.Artifact
		if d.Group == "" || d.Artifact == "" || seen[key] || d.Optional == "true" ||
			(d.Scope != "" && d.Scope != "compile" && d.Scope != "runtime") {
			continue
		}
		seen[key] = true
		out = append(out, d.Coord)
	}
	return out
}

// managedVersion is the version dependencyManagement gives key
// ("groupId:artifactId") as written, imports aside; the first entry wins.
func managedVersion(h maven.Hints, key string) string {
	for _, d := range h.Managed {
		if d.Group+":"+d.Artifact == key && d.Scope != "import" && d.Version != "" {
			return d.Version
		}
	}
	return ""
}

// misses are the answers of a chain that did not have a module or file:
// the repositories that answered "not found", those that were skipped
// offline (not in the cache) and those that failed (unreachable, 5xx).
type misses struct {
	notFound, notCached, failed []string
	// empty are the repositories that answered with a list of no version
	// (a maven-metadata.xml whose <versions> holds none).
	empty []string
	// answered is true when a repository other than the local Maven cache
	// answered "not found": an authoritative answer.
	answered bool
	hard     error // the first failure
	// throttled is the first failure that a repository chose (429 rate
	// limited, 401/403 denied): it may well have the module, so the miss
	// is never "not found".
	throttled error
}

// add records r's answer err and reports whether it was a failure (not
// an answer).
func (m *misses) add(r *entry, err error) bool {
	switch {
	case errors.Is(err, cache.ErrNotCached):
		m.notCached = append(m.notCached, r.String())
	case errors.Is(err, ErrNotFound):
		m.notFound = append(m.notFound, r.String())
		m.answered = m.answered || r.Name != RepoLocalM2
	default:
		m.failed = append(m.failed, r.String())
		if m.hard == nil {
			m.hard = err
		}
		if k := errdefs.KindOf(err); m.throttled == nil && (k == errdefs.RateLimited || k == errdefs.Denied) {
			m.throttled = err
		}
		return true
	}
	return false
}

// err is the error for what (a module, its versions) no repository had.
// It leads with the answers that came back, then names the repositories
// that were not asked (offline) or could not answer. The kind:
//   - offline, with a repository not asked: Unavailable (a run online may
//     find it), wrapping errNotCached and ErrNotFound;
//   - a repository refused to answer (429 rate limited, 401/403 denied):
//     that failure's kind, never NotFound, even when another answered
//     "not found" (the refusing one may have it);
//   - a repository other than the local Maven cache answered "not found":
//     NotFound, even when others were unreachable (a typo is not an
//     outage), wrapping ErrNotFound;
//   - else, with a failure: the failure's kind (an outage is not a typo);
//   - else NotFound.
func (m *misses) err(what string) error {
	var parts []string
	if len(m.notFound) > 0 {
		parts = append(parts, "not found in "+strings.Join(m.notFound, ", "))
	}
	if len(m.notCached) > 0 {
		parts = append(parts, "not in the cache for "+strings.Join(m.notCached, ", ")+" (offline: not asked)")
	}
	if len(m.failed) > 0 {
		parts = append(parts, "could not ask "+strings.Join(m.failed, ", "))
	}
	if len(m.empty) > 0 {
		parts = append(parts, "no version listed by "+strings.Join(m.empty, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "no repository to ask")
	}
	e := &chainMiss{msg: what + ": " + strings.Join(parts, "; ")}
	switch {
	case len(m.notCached) > 0:
		e.causes = []error{cache.ErrNotCached, ErrNotFound}
		return errdefs.New(errdefs.Unavailable, e)
	case m.throttled != nil:
		e.causes = []error{m.throttled}
		e.msg += ": " + m.throttled.Error()
		return errdefs.New(errdefs.KindOf(m.throttled), e)
	case m.hard != nil && m.answered:
		e.causes = []error{ErrNotFound, m.hard}
		e.msg += ": " + m.hard.Error()
		return errdefs.New(errdefs.NotFound, e)
	case m.hard != nil:
		e.causes = []error{m.hard}
		e.msg += ": " + m.hard.Error()
		return errdefs.New(errdefs.KindOf(m.hard), e)
	}
	e.causes = []error{ErrNotFound}
	return errdefs.New(errdefs.NotFound, e)
}

// chainMiss is misses.err's error: its message says everything, its
// causes are for errors.Is (ErrNotFound, errNotCached, the failure).
type chainMiss struct {
	msg    string
	causes []error
}

func (e *chainMiss) Error() string   { return e.msg }
func (e *chainMiss) Unwrap() []error { return e.causes }

// Artifact implements Source: the file comes from ref.Repo, the repository
// that served the module's POM.
func (s *Source) Artifact(ctx context.Context, ref ArtifactRef) (*CachedFile, error) {
	return s.artifact(ctx, asker{}, ref)
}

func (s *Source) artifact(ctx context.Context, a asker, ref ArtifactRef) (*CachedFile, error) {
	if err := checkModule(ref.Group, ref.Artifact, ref.Version, ref.Classifier, ref.Ext); err != nil {
		return nil, err
	}
	r := s.repoFor(ref.Repo)
	if r == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "artifact %s:%s:%s: repository %s (%s) is not in the chain", ref.Group, ref.Artifact, ref.Version, ref.Repo.Name, redact.URL(ref.Repo.URL))
	}
	var rel string
	var cf *CachedFile
	var err error
	for _, ar := range artifactRepos(r) {
		var rels []string
		if rels, err = s.relPaths(ctx, a, ar, ref.Group, ref.Artifact, ref.Version, ref.Classifier, ref.Ext); err != nil {
			return nil, err
		}
		for _, rel = range rels {
			if cf, err = s.file(ctx, a, ar, rel); err == nil || !errors.Is(err, ErrNotFound) {
				break
			}
		}
		if r = ar; err == nil || !errors.Is(err, ErrNotFound) {
			break
		}
	}
	if err == nil && r.Repository != ref.Repo {
		// A dual chain served it from another of its repositories.
		c := *cf
		c.Repo = r.Repository
		cf = &c
	}
	if err != nil {
		if errors.Is(err, cache.ErrNotCached) {
			return nil, errdefs.New(errdefs.Unavailable, fmt.Errorf("artifact %s: %w", r.base+rel, err))
		}
		if r.isM2Cache && errors.Is(err, ErrNotFound) {
			if e := m2POMOnly(r, ref, err); e != nil {
				return nil, e
			}
		}
		return nil, fmt.Errorf("artifact %s:%s:%s: %w", ref.Group, ref.Artifact, ref.Version, err)
	}
	return cf, nil
}

// checkModule is maven.CheckPart on every part of a module or artifact
// the source is asked for, whoever asks (the graph, speculation, a
// dynamic revision, a lock): no invalid part reaches a repository path.
// parts are groupId, artifactId, version[, classifier[, extension]].
func checkModule(parts ...string) error {
	if err := maven.CheckParts(parts...); err != nil {
		return errdefs.New(errdefs.Invalid, err)
	}
	return nil
}

// repoFor finds the chain entry of a Repository (by name and URL, falling
// back to the URL alone).
func (s *Source) repoFor(want Repository) *entry {
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

// file is fetch, printing its missing-checksum warning.
func (s *Source) file(ctx context.Context, a asker, r *entry, rel string) (*CachedFile, error) {
	f, err := s.fetch(ctx, a, r, rel)
	if err != nil {
		return nil, err
	}
	s.warn(a, f.warn)
	return s.materialize(f)
}

// fetch makes r/rel available in the cache: from the index, else by
// download (verified) or by copying a local file.
func (s *Source) fetch(ctx context.Context, a asker, r *entry, rel string) (*fetched, error) {
	if err := safepath.Rel(rel); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("repository %s: %w", r, err))
	}
	u := r.base + rel
	if _, ok := s.missing.Load(u); ok {
		return nil, errdefs.New(errdefs.NotFound, &HTTPError{URL: u, StatusCode: http.StatusNotFound})
	}
	cf, err := s.files.do(u, func() (*fetched, error) {
		if r.isFile() {
			return s.localFile(r, rel)
		}
		indexed := func() (*fetched, bool) {
			e, ok := s.cache.Lookup(u)
			if !ok {
				return nil, false
			}
			return &fetched{cf: &CachedFile{Path: s.cache.BlobPath(e.Sha256), Sha256: e.Sha256, Size: e.Size, URL: u}}, true
		}
		if f, ok := indexed(); ok {
			return f, nil
		}
		if s.offline {
			return nil, fmt.Errorf("%s: %w", u, cache.ErrNotCached)
		}
		// One download per URL across the processes sharing the cache:
		// whoever waited for the lock finds the URL indexed (cachelock.go).
		unlock, err := s.cache.LockURL(ctx, u)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if f, ok := indexed(); ok {
			return f, nil
		}
		if s.cache.SeenMissing(u) {
			return nil, errdefs.New(errdefs.NotFound, &HTTPError{URL: u, StatusCode: http.StatusNotFound})
		}
		f, err := s.download(ctx, a, r, rel)
		if err != nil && errors.Is(err, ErrNotFound) {
			s.cache.RecordMissing(u)
		}
		return f, err
	})
	if err != nil && errors.Is(err, ErrNotFound) {
		s.missing.Store(u, struct{}{})
	}
	return cf, err
}

// localFile copies a file of a file: repository into the cache, verifying
// its checksum files like a remote one.
func (s *Source) localFile(r *entry, rel string) (*fetched, error) {
	u := r.base + rel
	p, err := safepath.Join(r.dir, rel)
	if err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("repository %s: %w", r, err))
	}
	info, err := os.Stat(p)
	if err != nil || !info.Mode().IsRegular() {
		return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("%s: %w", u, ErrNotFound))
	}
	if err := checkSize(u, info.Size(), sizeCap(rel)); err != nil {
		return nil, err
	}
	sumFiles := func(ext string) ([]byte, error) {
		data, err := readFileMax(p+ext, MaxChecksumSize)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return data, err
	}
	if strings.HasSuffix(rel, ".pom") {
		// A POM is read into memory and parsed; it is copied into the
		// cache only if asked for as a file (materialize): a deep graph
		// from a file: repository then creates no cache file per POM.
		data, err := readFileMax(p, MaxPOMSize)
		if err != nil {
			return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("reading %s: %w", u, err))
		}
		sum, _ := cache.SumsOf(bytes.NewReader(data))
		warn, err := s.verify(u, sum, sumFiles, r.isM2Cache)
		if err != nil {
			return nil, err
		}
		return &fetched{cf: &CachedFile{Sha256: sum.SHA256, Size: sum.Size, URL: u}, warn: warn, data: data, sums: sum}, nil
	}
	sum, blob, err := s.cache.PutFile(p)
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, err)
	}
	warn, err := s.verify(u, sum, sumFiles, r.isM2Cache)
	if err != nil {
		return nil, err
	}
	return &fetched{cf: &CachedFile{Path: blob, Sha256: sum.SHA256, Size: sum.Size, URL: u}, warn: warn}, nil
}

// materialize gives f a cache path: a file: repository's POM is kept in
// memory until it is asked for as a file.
func (s *Source) materialize(f *fetched) (*CachedFile, error) {
	if f.cf.Path != "" {
		return f.cf, nil
	}
	f.once.Do(func() {
		p, err := s.cache.PutBytes(f.data, f.sums)
		if err != nil {
			f.matErr = errdefs.New(errdefs.CantWrite, err)
			return
		}
		cf := *f.cf
		cf.Path = p
		f.mat = &cf
	})
	return f.mat, f.matErr
}

// download GETs r/rel into the cache while fetching its checksum files in
// parallel (see fetchChecksums; none with ChecksumIgnore); it verifies the
// checksum before the blob becomes visible under its URL. It calls
// a.onBody with a POM's body before the checksum check.
func (s *Source) download(ctx context.Context, a asker, r *entry, rel string) (*fetched, error) {
	u := r.base + rel
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fileOK := make(chan struct{}) // closed on the file's 200
	var sums <-chan map[string]checksumFile
	if s.checksum != ChecksumIgnore {
		sums = s.fetchChecksums(cctx, a, r, rel, fileOK)
	}

	t, err := s.cache.NewTemp()
	if err != nil {
		return nil, err
	}
	defer t.Abort()
	// A POM is kept in memory too: the caller parses it at once.
	var dst resetWriter = fileDest{t}
	var mem *memBuf
	if strings.HasSuffix(rel, ".pom") {
		mem = &memBuf{max: MaxPOMSize}
		dst = teeDest{dst, mem}
	} else if c := sizeCap(rel); c > 0 {
		dst = &capDest{w: dst, max: c} // maven-metadata.xml
	} else {
		dst = &capDest{w: dst, max: s.f.maxArtifact} // an artifact
	}
	var td *trackedDest
	if mem == nil { // an artifact: report its transfer
		td = s.f.track(u, dst)
		dst = td
	}
	err = s.f.get(ctx, r.target(rel).priority(a.low), &okDest{resetWriter: dst, ok: fileOK})
	if td != nil {
		td.done(err)
	}
	if err != nil {
		return nil, err
	}
	if a.onBody != nil && mem != nil {
		// Speculation starts before the checksum check and the cache
		// writes: it only guesses, and the real request checks.
		a.onBody(mem.b)
	}
	sum := t.Sums()
	var warn string
	if sums != nil {
		got := <-sums
		if warn, err = s.verify(u, sum, func(ext string) ([]byte, error) {
			c, ok := got[ext]
			if !ok { // not fetched: verify stopped before (fetchChecksums' order is verify's)
				return nil, errdefs.Errorf(errdefs.Internal, "checksum %s%s was not fetched", u, ext)
			}
			return c.data, c.err
		}, false); err != nil {
			return nil, err
		}
	}
	blob, err := t.Commit()
	if err != nil {
		return nil, err
	}
	e := cache.IndexEntry{Sha256: sum.SHA256, Size: sum.Size}
	if err := s.cache.Record(u, e); err != nil {
		return nil, err
	}
	f := &fetched{cf: &CachedFile{Path: blob, Sha256: sum.SHA256, Size: sum.Size, URL: u}, warn: warn}
	if mem != nil {
		f.data = mem.b
	}
	return f, nil
}

// checksumFile is a fetched checksum file or the error fetching it.
type checksumFile struct {
	data []byte
	err  error
}

// fetchChecksums GETs r/rel's checksum files for verify, in the background,
// starting at once so that they travel with the file itself: the .sha1,
// and only when it does not exist, .sha256 and .md5 together, pipelined
// right after the .sha1's 404 once the file has answered 200 (fileOK is
// closed; a missing file needs no fallback). A present .sha1 costs one
// request and no round trip of its own; a missing one costs one more
// round, never two. Once a repository has answered a file without its
// .sha1, the next files from it ask the three at once (no extra round),
// until a .sha1 is found there again. The map holds the result of each
// file requested, by extension. Cancel ctx when the file fails.
func (s *Source) fetchChecksums(ctx context.Context, a asker, r *entry, rel string, fileOK <-chan struct{}) <-chan map[string]checksumFile {
	out := make(chan map[string]checksumFile, 1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[string]checksumFile{}
	get := func(ext string) checksumFile {
		b := &memBuf{max: MaxChecksumSize}
		err := s.f.get(ctx, r.target(rel+ext).priority(a.low), b)
		c := checksumFile{b.b, err}
		mu.Lock()
		got[ext] = c
		mu.Unlock()
		return c
	}
	fallback := func() {
		for _, ext := range []string{".sha256", ".md5"} { // verify's fallbacks
			wg.Add(1)
			go func() {
				defer wg.Done()
				get(ext)
			}()
		}
	}
	_, noSha1 := s.noSha1.Load(r.base)
	go func() {
		if noSha1 {
			fallback()
		}
		switch sha1 := get(".sha1"); {
		case sha1.err == nil:
			s.noSha1.Delete(r.base)
		case errors.Is(sha1.err, ErrNotFound) && !noSha1:
			select {
			case <-fileOK:
				s.noSha1.Store(r.base, struct{}{})
				fallback()
			case <-ctx.Done():
			}
		}
		wg.Wait()
		out <- got
	}()
	return out
}

// okDest is a download destination that closes ok when the response is a
// 200 (fetcher.once calls begin), passing begin on.
type okDest struct {
	resetWriter
	ok   chan struct{}
	once sync.Once
}

func (d *okDest) begin(total int64) {
	if s, ok := d.resetWriter.(contentLengthSetter); ok {
		s.begin(total)
	}
	d.once.Do(func() { close(d.ok) })
}

// teeDest writes to a resetWriter and a memBuf.
type teeDest struct {
	w   resetWriter
	mem *memBuf
}

func (d teeDest) Write(p []byte) (int, error) {
	if _, err := d.mem.Write(p); err != nil {
		return 0, err
	}
	return d.w.Write(p)
}

func (d teeDest) reset() error {
	d.mem.reset()
	return d.w.reset()
}

// verify checks a file's digests against its checksum files (.sha1, then
// .sha256, then .md5: the first that exists decides). A mismatch is always
// an error; a missing checksum follows the policy (with ChecksumWarn,
// warn is the warning to print). get returns an error
// matching ErrNotFound when a checksum file does not exist.
func (s *Source) verify(u string, sum cache.Sums, get func(ext string) ([]byte, error), quietMissing bool) (warn string, err error) {
	// Even with ChecksumIgnore a checksum at hand (a file: repository's) is
	// checked: a mismatch is always an error; only a missing checksum passes
	// silently. (download requests none with ChecksumIgnore.)
	for _, c := range []struct {
		ext, want string
		n         int
	}{{".sha1", sum.SHA1, 40}, {".sha256", sum.SHA256, 64}, {".md5", sum.MD5, 32}} {
		data, err := get(c.ext)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("checksum %s%s: %w", u, c.ext, err)
		}
		got, ok := parseChecksum(data, c.n)
		if !ok {
			return "", errdefs.Errorf(errdefs.Invalid, "checksum %s%s: malformed (want %d hex digits)", u, c.ext, c.n)
		}
		if got != c.want {
			return "", errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s: %s is %s, the file's is %s", ErrChecksumMismatch, u, c.ext[1:], got, c.want))
		}
		return "", nil
	}
	switch {
	case s.checksum == ChecksumStrict:
		return "", errdefs.New(errdefs.Invalid, &errdefs.OptionError{Option: "resolver.Request.ChecksumPolicy", Err: fmt.Errorf("%w for %s (.sha1, .sha256, .md5) and the checksum policy is strict", ErrChecksumMissing, u)})
	case s.checksum == ChecksumWarn && !quietMissing:
		return "no checksum for " + u, nil
	}
	return "", nil
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
func (s *Source) Versions(ctx context.Context, group, artifact string) ([]string, error) {
	if err := checkModule(group, artifact, ""); err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	var m misses
	for _, r := range s.chain {
		vs, err := s.versionsIn(ctx, r, group, artifact)
		if err != nil {
			if m.add(r, err) {
				s.warn(asker{}, r.Name+": "+redact.String(err.Error()))
			}
			continue
		}
		if len(vs) == 0 {
			m.empty = append(m.empty, r.String())
		}
		for _, v := range vs {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		return nil, m.err("versions of " + group + ":" + artifact)
	}
	return out, nil
}

type metadata struct {
	Versions []string `xml:"versioning>versions>version"`
}

func (s *Source) versionsIn(ctx context.Context, r *entry, group, artifact string) ([]string, error) {
	dir, useMetadata, err := versionsDir(r, group, artifact)
	if err != nil {
		s.refused.LoadOrStore("", err)
		return nil, err
	}
	if !useMetadata {
		return s.listing(ctx, r, dir)
	}
	cf, err := s.file(ctx, asker{}, r, dir+"maven-metadata.xml")
	if err == nil {
		if err := checkSize(cf.URL, cf.Size, MaxMetadataSize); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(cf.Path)
		if err != nil {
			return nil, err
		}
		var m metadata
		if err := xml.Unmarshal(data, &m); err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "malformed %s: %v", cf.URL, err)
		}
		var vs []string
		for _, v := range m.Versions {
			if v = strings.TrimSpace(v); v != "" {
				if err := maven.CheckPart(maven.FieldVersion, v); err != nil {
					return nil, errdefs.Errorf(errdefs.Invalid, "malformed %s: %w", cf.URL, err)
				}
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
func (s *Source) listing(ctx context.Context, r *entry, dir string) ([]string, error) {
	if r.isFile() {
		p, err := safepath.Join(r.dir, dir)
		if err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("repository %s: %w", r, err))
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.base+dir, ErrNotFound)
		}
		var vs []string
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && maven.CheckPart(maven.FieldVersion, e.Name()) == nil {
				vs = append(vs, e.Name())
			}
		}
		return vs, nil
	}
	if s.offline {
		return nil, fmt.Errorf("%s: %w", r.base+dir, cache.ErrNotCached)
	}
	b := &memBuf{max: maxListingSize}
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
		if v == "" || maven.CheckPart(maven.FieldVersion, v) != nil || strings.HasPrefix(v, ".") ||
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

// privateChain reports whether any repository of the chain has credentials.
func privateChain(chain []*entry) bool {
	for _, r := range chain {
		if r.hasAuth {
			return true
		}
	}
	return false
}
