package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/noanswer"
	"github.com/prebake/prebake/internal/progress/task"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/safepath"
)

// URLStyle is how a store's jars are named in spark.jars.
type URLStyle string

// URL styles for the spark.jars value.
const (
	StyleS3A       URLStyle = "s3a"       // s3a://bucket/key: needs hadoop-aws and the AWS SDK in the image (default)
	StylePresigned URLStyle = "presigned" // https with a signed query: bearer credentials, valid for Expires
	StyleHTTPS     URLStyle = "https"     // plain https: the bucket must allow anonymous reads
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotFound is matched by a missing object, set or bucket.
	ErrNotFound = errors.New("not found")
	// ErrNoBucket is matched by a missing bucket; it also matches ErrNotFound.
	ErrNoBucket = fmt.Errorf("bucket %w", ErrNotFound)
	// ErrExists is returned by a conditional write when the object is
	// already there (HTTP 412 or an existing file).
	ErrExists = errors.New("already exists")
)

// Logger receives progress lines. It is never given secrets.
type Logger interface {
	Printf(format string, args ...any)
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// debugLogger is a Logger with a verbose level (*progress.Reporter is one).
// Per-jar lines go to Debugf when the Logger has it.
type debugLogger interface {
	Debugf(format string, args ...any)
}

// Progress starts transfer tasks, one per jar upload. *progress.Reporter
// (internal/progress) implements it.
type Progress interface {
	Start(name string, total int64) task.Task
}

type nopTask struct{}

func (nopTask) Add(int64)  {}
func (nopTask) Done(error) {}

// Option configures a Store: set at Open, it applies to every call (each
// option names the calls it governs). Options are pure setters; their
// order does not matter.
type Option func(*options) error

type options struct {
	endpoint    string
	pathStyle   bool
	region      string
	httpClient  *http.Client
	respTimeout time.Duration
	slow        noanswer.Limits // see makeOptions
	concurrency int
	partSize    int64
	threshold   int64
	maxAttempts int
	maxBackoff  time.Duration
	accessKey   string
	secretKey   string
	expires     time.Duration
	logger      Logger
	progress    Progress
}

// WithEndpoint sets the S3 endpoint URL (for S3-compatible servers). The
// default is AWS's endpoint for the region.
func WithEndpoint(u string) Option {
	return func(o *options) error {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return errdefs.Optionf(errdefs.BadArgument, "s3store.WithEndpoint", "endpoint %q: must be an http or https URL", redact.URL(u))
		}
		if p.User != nil {
			return errdefs.Optionf(errdefs.BadArgument, "s3store.WithEndpoint", "endpoint %q: must not carry credentials (use the AWS credential chain)", redact.URL(u))
		}
		o.endpoint = strings.TrimSuffix(u, "/")
		return nil
	}
}

// WithPathStyle addresses buckets as endpoint/bucket/key instead of
// bucket.endpoint/key. The default is false (virtual-hosted style).
func WithPathStyle(b bool) Option { return func(o *options) error { o.pathStyle = b; return nil } }

// WithRegion sets the AWS region. The default comes from the AWS config
// chain, else us-east-1.
func WithRegion(r string) Option { return func(o *options) error { o.region = r; return nil } }

// WithHTTPClient sets the HTTP client (tests count bytes through it). The
// default has the SDK's transport. Either way a GET, HEAD or DELETE must be
// whole within 60s at 1 KiB/s or more, and a redirect is followed only to
// the same scheme, host and port.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error { o.httpClient = c; return nil }
}

// withSlowLimits sets the deadline and the minimum rate of GET, HEAD and
// DELETE requests (tests).
func withSlowLimits(deadline time.Duration, minRate int64, window time.Duration) Option {
	return func(o *options) error {
		o.slow.Deadline, o.slow.MinRate, o.slow.Window = deadline, minRate, window
		return nil
	}
}

// WithResponseTimeout bounds the wait for a response's headers once a
// request (its body included) is sent; the attempt then fails and is
// retried like a refused connection, so a server that accepts connections
// but never answers gives errdefs.Unavailable after the retries instead of
// hanging. The default is 30s. It applies to the default HTTP client only.
func WithResponseTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("response timeout %s: must be positive", d)
		}
		o.respTimeout = d
		return nil
	}
}

// WithConcurrency bounds the blob transfers and HEADs in flight, and the
// parts of one multipart upload. The default is 8.
func WithConcurrency(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return errdefs.Optionf(errdefs.BadArgument, "s3store.WithConcurrency", "concurrency %d: must be at least 1", n)
		}
		o.concurrency = n
		return nil
	}
}

// WithPartSize sets the multipart part size and the size from which uploads
// are multipart (threshold). The defaults are 8 MiB and 16 MiB. S3 needs
// parts of at least 5 MiB.
func WithPartSize(part, threshold int64) Option {
	return func(o *options) error {
		if part < 5<<20 || threshold < part {
			return fmt.Errorf("part size %d must be at least 5 MiB and at most the threshold %d", part, threshold)
		}
		o.partSize, o.threshold = part, threshold
		return nil
	}
}

// WithRetry sets the attempts per request (500, 503 SlowDown and connection
// errors are retried) and the longest back-off. The defaults are 5 and 20s.
func WithRetry(maxAttempts int, maxBackoff time.Duration) Option {
	return func(o *options) error {
		if maxAttempts < 1 {
			return fmt.Errorf("max attempts %d: must be at least 1", maxAttempts)
		}
		o.maxAttempts, o.maxBackoff = maxAttempts, maxBackoff
		return nil
	}
}

// WithStaticCredentials uses the given key pair instead of the AWS
// credential chain (tests use it). The default is the chain.
func WithStaticCredentials(accessKey, secretKey string) Option {
	return func(o *options) error { o.accessKey, o.secretKey = accessKey, secretKey; return nil }
}

// WithExpires sets how long presigned URLs stay valid. It must outlast the
// job. The default is 6h; S3 allows at most 7 days.
func WithExpires(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 || d > 7*24*time.Hour {
			return errdefs.Optionf(errdefs.BadArgument, "s3store.WithExpires", "presigned URL expiry %s: must be between 1s and 168h (S3's limit for presigned URLs)", d)
		}
		o.expires = d
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

// WithProgress reports every jar upload to p as a task counting the bytes
// read from the jar as they are sent (multipart uploads included). The
// default reports nothing.
func WithProgress(p Progress) Option { return func(o *options) error { o.progress = p; return nil } }

func (o *options) startTask(name string, total int64) task.Task {
	if o.progress == nil {
		return nopTask{}
	}
	return o.progress.Start(name, total)
}

// debugf prints a per-jar line: at the Logger's verbose level when it has
// one, else as a plain line.
func (o *options) debugf(format string, args ...any) {
	if d, ok := o.logger.(debugLogger); ok {
		d.Debugf(format, args...)
		return
	}
	o.logger.Printf(format, args...)
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{
		concurrency: 8,
		partSize:    8 << 20,
		threshold:   16 << 20,
		maxAttempts: 5,
		maxBackoff:  20 * time.Second,
		respTimeout: 30 * time.Second,
		// A GET, HEAD or DELETE (manifests, listings) must be whole within
		// 60s and bring 1 KiB/s over 30s: a trickling endpoint fails the
		// attempt inside the HTTP client, where the SDK retries it.
		slow: noanswer.Limits{What: "S3", Classify: s3Kind, Deadline: noanswer.DefaultDeadline,
			MinRate: noanswer.DefaultMinRate, Window: noanswer.DefaultWindow, MaxBuffer: maxGetSize},
		expires: 6 * time.Hour,
		logger:  nopLogger{},
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if (o.accessKey == "") != (o.secretKey == "") {
		return nil, errors.New("static credentials need both an access key and a secret key")
	}
	return o, nil
}

// CheckStyle validates a URL style name.
func CheckStyle(s URLStyle) error {
	switch s {
	case StyleS3A, StylePresigned, StyleHTTPS:
		return nil
	}
	return errdefs.Optionf(errdefs.BadArgument, "s3store.URLStyle", "URL style %q: must be s3a, presigned or https", s)
}

// object is one stored object, as listed.
type object struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// maxGetSize bounds a small object read whole: a set manifest.
const maxGetSize = 64 << 20

// tooLargeErr is the error of an object over maxGetSize.
func tooLargeErr(name string) error {
	return errdefs.Errorf(errdefs.Invalid, "GET %s: answer larger than %d bytes (a set manifest is far smaller)", name, maxGetSize)
}

// backend is what a Store needs from S3 or a directory. Keys are full keys
// (prefix included).
type backend interface {
	// head returns the object's size, or an error matching ErrNotFound.
	head(ctx context.Context, key string) (int64, error)
	// get reads a small object whole, of at most maxGetSize bytes (larger:
	// errdefs.Invalid, "answer larger than N bytes"); ErrNotFound when
	// missing.
	get(ctx context.Context, key string) ([]byte, error)
	// putFile uploads body, the bytes of local file (size bytes, sha256
	// hex; file names it in errors), without clobbering; ErrExists when the
	// key is already there. body is read once, in order.
	putFile(ctx context.Context, key, file string, body io.Reader, size int64, sha string) error
	// putBytes writes a small object without clobbering; ErrExists when the
	// key is already there.
	putBytes(ctx context.Context, key string, data []byte) error
	// url returns the URL of key in the given style.
	url(ctx context.Context, key string, style URLStyle, expires time.Duration) (string, error)
	// list lists the objects under a key prefix.
	list(ctx context.Context, prefix string) ([]object, error)
	// remove deletes an object; a missing object is no error.
	remove(ctx context.Context, key string) error
	// uploads lists the multipart uploads in progress (never completed
	// nor aborted) under a key prefix; none for a backend without them.
	uploads(ctx context.Context, prefix string) ([]upload, error)
	// abort aborts a multipart upload, dropping its parts; one already
	// gone is no error.
	abort(ctx context.Context, u upload) error
	// name returns the printable location of key (no credentials).
	name(key string) string
}

// Store is a content-addressed jar store. It is safe for concurrent use;
// concurrent uploads of the same blob are merged.
type Store struct {
	b      backend
	prefix string // "" or "p/" with a trailing slash
	url    string // the store URL as given (no credentials)
	o      *options
	sem    chan struct{}

	mu       sync.Mutex
	inflight map[string]*call // uploads in progress, by key
}

// Open opens the store at storeURL: s3://bucket[/prefix] (s3a:// is the
// same store) or file:///dir (an absolute path is taken as a directory; a
// relative one without a scheme, such as bucket/prefix, is a usage error).
// It makes no request.
func Open(ctx context.Context, storeURL string, opts ...Option) (*Store, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Store{o: o, sem: make(chan struct{}, o.concurrency), inflight: map[string]*call{}}
	u, perr := url.Parse(storeURL)
	switch {
	case perr == nil && (u.Scheme == "s3" || u.Scheme == "s3a"):
		if u.User != nil {
			return nil, errdefs.Optionf(errdefs.BadArgument, "s3store.Open", "store %s: must not carry credentials (use the AWS credential chain)", redact.URL(storeURL))
		}
		if u.Host == "" {
			return nil, errdefs.Optionf(errdefs.BadArgument, "s3store.Open", "store %q: no bucket (want s3://bucket/prefix)", storeURL)
		}
		s.prefix = cleanPrefix(u.Path)
		s.url = "s3://" + u.Host + "/" + s.prefix
		b, err := newS3Backend(ctx, u.Host, o)
		if err != nil {
			return nil, err
		}
		s.b = b
	case perr == nil && u.Scheme == "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, errdefs.Optionf(errdefs.BadArgument, "s3store.Open", "store %q: file URLs need an absolute path (file:///dir)", storeURL)
		}
		s.b, s.url = newFileBackend(u.Path), "file://"+filepath.ToSlash(u.Path)
	case perr == nil && u.Scheme == "" && !filepath.IsAbs(storeURL):
		return nil, NoScheme(storeURL)
	case filepath.IsAbs(storeURL):
		abs, err := filepath.Abs(storeURL)
		if err != nil {
			return nil, errdefs.Optionf(errdefs.BadArgument, "s3store.Open", "store %q: %w", storeURL, err)
		}
		s.b, s.url = newFileBackend(abs), "file://"+filepath.ToSlash(abs)
	default:
		return nil, errdefs.Optionf(errdefs.BadArgument, "s3store.Open", "store %q: must be s3://bucket/prefix (or s3a://) or file:///dir", redact.URL(storeURL))
	}
	return s, nil
}

// NoScheme is the usage error for a store named without a scheme, such as
// bucket/prefix: it would otherwise be taken as a local directory.
func NoScheme(storeURL string) error {
	return errdefs.Optionf(errdefs.BadArgument, "s3store.Open", "store %q: no scheme; want s3://%s (S3) or file:///absolute/dir (a local directory)", redact.URL(storeURL), strings.TrimPrefix(storeURL, "/"))
}

// URL returns the store's URL (without credentials).
func (s *Store) URL() string { return s.url }

func cleanPrefix(p string) string {
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return ""
	}
	return p + "/"
}

// JarPath returns the path of a jar relative to the store prefix:
// jars/sha256/<hex>/<file>.
func JarPath(sha256Hex, file string) string {
	return "jars/sha256/" + strings.ToLower(sha256Hex) + "/" + file
}

// SetPath returns the path of a set manifest relative to the store prefix:
// sets/<lock-hash>.json.
func SetPath(lockHash string) string { return "sets/" + lockHash + ".json" }

func (s *Store) key(rel string) string { return s.prefix + rel }

// jarKey is the key of a jar: defence in depth behind the checks of
// ParseManifest and Bake, it is jars/sha256/<hex>/<file> under the prefix,
// with file a bare file name.
func (s *Store) jarKey(j ManifestJar) (string, error) {
	if err := safepath.Name(j.File); err != nil {
		return "", errdefs.Errorf(errdefs.Invalid, "store %s: jar: %w", s.url, err)
	}
	if j.Path != JarPath(j.Sha256, j.File) {
		return "", errdefs.Errorf(errdefs.Invalid, "store %s: jar %s: the key %s is not jars/sha256/<hex>/<file>", s.url, coordpart.Quote(j.File), coordpart.Quote(j.Path))
	}
	key, err := safepath.JoinSlash(s.prefix, j.Path)
	if err != nil {
		return "", errdefs.Errorf(errdefs.Invalid, "store %s: %w", s.url, err)
	}
	return key, nil
}

// acquire takes a transfer slot.
func (s *Store) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) release() { <-s.sem }
