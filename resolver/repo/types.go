package repo

import (
	"time"

	"github.com/prebake/prebake/resolver/cache"
)

// Config is where a chain's repositories are and how they are reached:
// the I/O half of resolver.Request, with its meaning (see there).
type Config struct {
	Repositories              []string
	NoDefaultRepositories     bool
	Home                      string
	DefaultArtifactRepository string
	Settings                  string
	IvySettings               string
	IvyHome                   string
	Offline                   bool
	CacheDir                  string
	ChecksumPolicy            ChecksumPolicy
	// UserAgent is the User-Agent of every repository request; "" is
	// UserAgent("") (WithUserAgent).
	UserAgent string
	// MaxRetryWait bounds the Retry-After waits of one request
	// (WithMaxRetryWait): 0 is DefaultMaxRetryWait, a negative value waits
	// for none.
	MaxRetryWait time.Duration
}

// options are the transport options cfg sets (UserAgent, MaxRetryWait),
// applied before the caller's.
func (cfg Config) options(opts []Option) []Option {
	var out []Option
	if cfg.UserAgent != "" {
		out = append(out, WithUserAgent(cfg.UserAgent))
	}
	switch {
	case cfg.MaxRetryWait < 0:
		out = append(out, WithMaxRetryWait(0))
	case cfg.MaxRetryWait > 0:
		out = append(out, WithMaxRetryWait(cfg.MaxRetryWait))
	}
	return append(out, opts...)
}

// ChecksumPolicy says what a missing checksum does (a mismatch always
// fails).
type ChecksumPolicy string

// Checksum policies.
const (
	ChecksumStrict ChecksumPolicy = "strict"
	ChecksumWarn   ChecksumPolicy = "warn" // default
	ChecksumIgnore ChecksumPolicy = "ignore"
)

// ErrNotFound is matched (errors.Is) by every "module or artifact not found" error.
var ErrNotFound = cache.ErrNotFound

// Logger receives progress lines (to stderr); it must not be given secrets.
type Logger interface {
	Printf(format string, args ...any)
}

// Repository is one entry of the chain.
type Repository struct {
	Name string // Spark's resolver name: local-m2-cache, central, spark-packages, repo-1…
	URL  string // without userinfo: safe to print
}

// POMFile is a fetched POM.
type POMFile struct {
	Data []byte
	Repo Repository
	URL  string // without userinfo
}

// ArtifactRef names one artifact file of a module.
type ArtifactRef struct {
	Group, Artifact, Version string
	Classifier               string // optional
	Ext                      string // "jar" unless the POM says otherwise
	Repo                     Repository
}

// CachedFile is an artifact in the content-addressed cache.
type CachedFile struct {
	Path   string // the cache's blob path, named by sha256
	Sha256 string
	Size   int64
	URL    string // the URL that served it, without userinfo
	// Repo is the repository that served it when that is not the
	// ArtifactRef's (an Ivy settings chain in dual mode); else empty.
	Repo Repository
}
