package layers

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/noanswer"
	"github.com/prebake/prebake/internal/progress/task"
)

// Logger receives progress lines (to stderr). It is never given secrets.
type Logger interface {
	Printf(format string, args ...any)
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// Option configures Bake, Inspect, ReadJars and BuildImage.
type Option func(*options) error

type options struct {
	auth        authn.Authenticator
	keychain    authn.Keychain
	transport   http.RoundTripper // nil: remote.DefaultTransport with respTimeout
	rt          http.RoundTripper // the transport in use, made once
	respTime    time.Duration
	slow        noanswer.Limits // see makeOptions
	jobs        int
	logger      Logger
	cacheDir    string
	epoch       *time.Time
	maxLayers   int
	bigJar      int64
	userAgent   string
	progress    Progress
	compression Compression
	jarOpener   JarOpener
	tmp         string        // the bake's temporary blob directory, once made
	fresh       []*builtLayer // the layers whose blobs this call wrote
}

// Progress starts transfer tasks: building a layer, pushing an image.
// *progress.Reporter (internal/progress) implements it.
type Progress interface {
	Start(name string, total int64) task.Task
}

// WithProgress reports the layer builds and the push to p. The default
// reports nothing.
func WithProgress(p Progress) Option {
	return func(o *options) error {
		o.progress = p
		return nil
	}
}

func (o *options) startTask(name string, total int64) task.Task {
	if o.progress == nil {
		return nopTask{}
	}
	return o.progress.Start(name, total)
}

type nopTask struct{}

func (nopTask) Add(int64)  {}
func (nopTask) Done(error) {}

// makeOptions sets the defaults, applies opts and returns the first
// option's error.
func makeOptions(opts ...Option) (*options, error) {
	o := &options{
		keychain: authn.DefaultKeychain,
		respTime: DefaultResponseTimeout,
		// A manifest (any GET or HEAD but a blob's) must be whole within
		// 60s, a blob's body bring 1 KiB/s over 30s: a trickling registry
		// fails the attempt. A manifest is read inside the transport, where
		// ggcr retries it.
		slow: noanswer.Limits{What: "registry", Classify: registryKind, Deadline: noanswer.DefaultDeadline,
			MinRate: noanswer.DefaultMinRate, Window: noanswer.DefaultWindow, MaxBuffer: 4 << 20},
		jobs:      4,
		logger:    nopLogger{},
		maxLayers: 1,
		bigJar:    64 << 20,
		userAgent: "prebake",
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.jobs < 1 {
		o.jobs = 1
	}
	if o.maxLayers < 1 {
		o.maxLayers = 1
	}
	if o.maxLayers > MaxLayers {
		o.maxLayers = MaxLayers
	}
	return o, nil
}

// WithBasicAuth authenticates with user and password (the CLI's
// registry credentials) to one registry: the target's for Bake (the base's when
// the target is a layout), the named image's for Inspect and ReadJars.
// Other registries (a public base on Docker Hub) keep the Docker config
// keychain ($DOCKER_CONFIG/config.json, credential helpers), the default.
func WithBasicAuth(user, password string) Option {
	return func(o *options) error {
		o.auth = &authn.Basic{Username: user, Password: password}
		return nil
	}
}

// WithKeychain resolves registry credentials with kcs, asked in order
// (authn.NewMultiKeychain): a cloud registry's helper (an ECR, GCR or ACR
// keychain, or a Kubernetes pull-secret keychain) before or after the
// Docker config one. It replaces the default, authn.DefaultKeychain, so
// pass that too to keep $DOCKER_CONFIG's credentials. WithBasicAuth still
// wins for its one registry.
func WithKeychain(kcs ...authn.Keychain) Option {
	return func(o *options) error {
		o.keychain = authn.NewMultiKeychain(kcs...)
		return nil
	}
}

// scopedKeychain gives auth to host and asks fallback for the others.
type scopedKeychain struct {
	host     string
	auth     authn.Authenticator
	fallback authn.Keychain
}

func (k scopedKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() == k.host {
		return k.auth, nil
	}
	return k.fallback.Resolve(r)
}

// scopeAuth applies WithBasicAuth to the registry of r only.
func (o *options) scopeAuth(r *ref) {
	if o.auth == nil || r == nil || r.isLayout() {
		return
	}
	o.keychain = scopedKeychain{host: r.name.Context().RegistryStr(), auth: o.auth, fallback: o.keychain}
	o.auth = nil
}

// WithTransport sets the HTTP transport under ggcr's auth and retry layers
// (tests count requests with it). The default is remote.DefaultTransport
// with a response timeout (WithResponseTimeout).
func WithTransport(rt http.RoundTripper) Option {
	return func(o *options) error {
		o.transport = rt
		return nil
	}
}

// DefaultResponseTimeout is how long the default transport waits for a
// registry's response headers once a request (its body included) is sent.
// Generous: a registry may verify a big blob's digest before it answers.
const DefaultResponseTimeout = 60 * time.Second

// WithResponseTimeout bounds the wait for a registry's response headers
// with the default transport: a registry that accepts connections but never
// answers fails the attempt (retried by ggcr, then errdefs.Unavailable)
// instead of hanging the bake. The default is DefaultResponseTimeout.
func WithResponseTimeout(d time.Duration) Option {
	return func(o *options) error {
		o.respTime = d
		return nil
	}
}

// roundTripper returns the transport: the one given, else a copy of
// remote.DefaultTransport with the response timeout; either way a timeout
// of its own surfaces as a *noanswer.Error, and a slow answer (o.slow) as a
// *noanswer.SlowError.
func (o *options) roundTripper() http.RoundTripper {
	if o.rt != nil {
		return o.rt
	}
	rt := o.transport
	if rt == nil {
		t := remote.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = o.respTime
		rt = t
	}
	o.rt = noanswer.Transport{RT: noanswer.SlowTransport{RT: rt, Limits: o.slow}, What: "registry", D: o.respTime}
	return o.rt
}

// registryKind: a blob's GET streams (under the minimum rate); any other
// GET or HEAD (manifests, tags, the /v2/ ping, tokens) is Small; uploads
// are bounded by the response timeout only.
func registryKind(r *http.Request) noanswer.Kind {
	switch {
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/"):
		return noanswer.Stream
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return noanswer.Small
	}
	return noanswer.Pass
}

// withSlowLimits sets the manifest deadline and the minimum rate (tests).
func withSlowLimits(deadline time.Duration, minRate int64, window time.Duration) Option {
	return func(o *options) error {
		o.slow.Deadline, o.slow.MinRate, o.slow.Window = deadline, minRate, window
		return nil
	}
}

// WithJobs bounds the number of concurrent blob uploads. The default is 4.
func WithJobs(n int) Option {
	return func(o *options) error {
		o.jobs = n
		return nil
	}
}

// WithLogger sends progress lines to l. The default discards them.
func WithLogger(l Logger) Option {
	return func(o *options) error {
		if l != nil {
			o.logger = l
		}
		return nil
	}
}

// WithCacheDir sets where built layers (their compressed blobs, by content,
// and their digests, by a key of their inputs) and the per-layer file lists
// of base images (for the conflict report) are cached. The default is no
// cache: layer blobs are written to a temporary directory, removed when the
// bake returns.
func WithCacheDir(dir string) Option {
	return func(o *options) error {
		o.cacheDir = dir
		return nil
	}
}

// WithEpoch sets the mtime of every layer entry. The default is
// SOURCE_DATE_EPOCH when set and non-empty, else 1970-01-01T00:00:01Z.
func WithEpoch(t time.Time) Option {
	return func(o *options) error {
		o.epoch = &t
		return nil
	}
}

// WithLayers splits the jars into at most n layers (1..MaxLayers) with a
// deterministic assignment; jars of at least the big-jar size get a layer of
// their own while layers remain. The default is 1.
func WithLayers(n int) Option {
	return func(o *options) error {
		o.maxLayers = n
		return nil
	}
}

// WithBigJarSize sets the size from which a jar gets its own layer (with
// WithLayers > 1). The default is 64 MiB.
func WithBigJarSize(n int64) Option {
	return func(o *options) error {
		o.bigJar = n
		return nil
	}
}

// tempDir returns the bake's temporary directory for layer blobs that are
// not cached, making it on first use; removeTemp removes it.
func (o *options) tempDir() (string, error) {
	if o.tmp == "" {
		d, err := os.MkdirTemp("", "prebake-layers-")
		if err != nil {
			return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("temporary layer directory: %w", err))
		}
		o.tmp = d
	}
	return o.tmp, nil
}

func (o *options) removeTemp() {
	if o.tmp != "" {
		os.RemoveAll(o.tmp)
		o.tmp = ""
	}
}

// MaxLayers is the most layers a bake splits the jars into (WithLayers);
// a shared layer (BakeInput.Shared) and the Extra files' come on top.
const MaxLayers = 8

func (o *options) remoteOptions(ctxOpts ...remote.Option) []remote.Option {
	ro := []remote.Option{
		remote.WithTransport(o.roundTripper()),
		remote.WithJobs(o.jobs),
		remote.WithUserAgent(o.userAgent),
		remote.WithRetryPredicate(retryable),
	}
	if o.auth != nil {
		ro = append(ro, remote.WithAuth(o.auth))
	} else {
		ro = append(ro, remote.WithAuthFromKeychain(o.keychain))
	}
	return append(ro, ctxOpts...)
}

// retryable is ggcr's default retry predicate plus a refused connection
// (a registry restarting), so that errdefs.Unavailable comes after retries
// (1s, 3s) as for the repositories and S3.
func retryable(err error) bool {
	var te interface{ Temporary() bool }
	return (errors.As(err, &te) && te.Temporary()) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, net.ErrClosed)
}

// layerEpoch is WithEpoch, else Epoch().
func (o *options) layerEpoch() (time.Time, error) {
	if o.epoch != nil {
		return o.epoch.UTC(), nil
	}
	return Epoch()
}

// JarOpener opens a jar of the lock at path (sha256 hex, size bytes) so
// that its bytes are checked as they are read, or says it does not take
// that path (ok false): the bake then hashes the jar as it reads it. The
// resolver's cache gives one (resolver/cache.JarOpener) that trusts a blob by
// its stamp, so a cached jar is read once and not hashed again.
type JarOpener func(path, sha256 string, size int64) (rc io.ReadCloser, ok bool, err error)

// WithJarOpener sets the JarOpener of the bake's jars. The default is none:
// every jar is hashed as the layer reads it.
func WithJarOpener(jo JarOpener) Option {
	return func(o *options) error {
		o.jarOpener = jo
		return nil
	}
}
