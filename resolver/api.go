package resolver

// This file is the contract between the resolver's parts and its callers
// (cmd and hack tools; the stores and submit use only the lock package). Keep it small and stable.

import (
	"context"
	"time"

	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver/repo"
)

// Conflict is the conflict mode (owned by the lock package; a lock records
// its mode).
type Conflict = lock.Conflict

// Conflict modes.
const (
	ConflictLatest  = lock.ConflictLatest  // Ivy's latest-revision, Spark's behaviour (default)
	ConflictNearest = lock.ConflictNearest // Maven's nearest-wins
)

// Request is what to resolve and where from, with spark-submit's inputs
// (Resolve, NewSource, LockFor; FetchLocked uses the fields that say where
// a lock's repositories are). How the work is done (transport, retries,
// parallelism, logging) is an Option; no setting is both.
type Request struct {
	// Packages are --packages values as given (each may hold several
	// comma-separated coordinates, split with Spark's rules).
	Packages []string
	// Repositories are --repositories values (comma-separated lists allowed);
	// http, https and file URLs, with optional userinfo credentials.
	Repositories []string
	// Excludes are --exclude-packages values: g:a globs, comma-separated.
	Excludes []string
	// NoDefaultRepositories drops ~/.m2, Central and spark-packages.
	NoDefaultRepositories bool
	// Home is the user's home directory: the default chain's
	// local-m2-cache is its .m2/repository ("" drops local-m2-cache), and
	// settings files expand ${user.home} to it. The resolver reads no
	// environment: the caller (cmd) sets Home and DefaultArtifactRepository.
	Home string
	// DefaultArtifactRepository is Spark's $DEFAULT_ARTIFACT_REPOSITORY:
	// when set, it replaces the roots of central and spark-packages.
	DefaultArtifactRepository string
	// Settings is a Maven settings.xml path (mirrors, server credentials); optional.
	Settings string
	// IvySettings is spark.jars.ivySettings: an Ivy settings file (a path
	// or a file: URI) whose default resolver replaces Spark's chain, with
	// Repositories added on top as Spark adds them. Optional.
	IvySettings string
	// IvyHome is spark.jars.ivy. It moves Ivy's user dir and cache, which
	// prebake does not use (see the README); optional.
	IvyHome string
	// Conflict is ConflictLatest (default) or ConflictNearest.
	Conflict Conflict
	// SparkVersion is the Spark version whose Ivy the resolution follows
	// (IvyOf): before 3.5.9 Ivy 2.5.1, which loses POM dependencies that
	// differ only by classifier (IVY-1642). "" follows Ivy 2.5.2 and later
	// (3.5.9+, 4.x). The lock records the Ivy when it is 2.5.1. IvyVersion
	// overrides it.
	SparkVersion string
	// IvyVersion chooses the Ivy to follow, one of KnownIvyVersions
	// (EffectiveIvy): "" is the Spark line's. 2.6.0, which no Spark
	// release ships yet, matches dependencyManagement by type and
	// classifier (IVY-1654) and accepts an ivySettings file naming the
	// nearest conflict manager (IVY-813), which spark-submit's resolution
	// does not apply (ivySettingsConflict). The lock records an Ivy other than
	// 2.5.2/2.5.3.
	IvyVersion string
	// LockPath, when set, is read if it exists and matches the inputs, and
	// written after a fresh resolution.
	LockPath string
	// Frozen fails with an errdefs.Stale error when the lock is missing or
	// stale.
	Frozen bool
	// Offline makes no network request: everything must be in the cache.
	Offline bool
	// CacheDir is the content-addressed cache; "" means cache.DefaultDir.
	CacheDir string
	// ChecksumPolicy is ChecksumStrict, ChecksumWarn (default) or ChecksumIgnore.
	ChecksumPolicy ChecksumPolicy
	// Signatures, when set, verifies every jar's signature (.asc) against
	// its pinned keys and records the signer in the lock (signatures.go);
	// a lock used as it is must record a signer for every jar, each one
	// checked again (offline from the cache). Nil checks no signature.
	Signatures SignatureVerifier
	// UserAgent is the User-Agent of every repository request
	// (repo.UserAgent with the caller's version); "" is repo.UserAgent("").
	// Like Home, the caller (cmd) sets it: the resolver reads no global.
	UserAgent string
	// MaxRetryWait bounds how long, in all, one request waits for the
	// Retry-After of a 429 or 503 before failing with it (a 429 is
	// errdefs.RateLimited): 0 is repo.DefaultMaxRetryWait, a negative
	// value waits for none.
	MaxRetryWait time.Duration
}

// Result is what Resolve gives back.
type Result struct {
	// Lock is the resolved set (always set). Its artifacts are in spark.jars order.
	Lock *lock.File
	// Paths are the local cache paths of Lock.Artifacts, index for index.
	Paths []string
	// Graph is the resolution graph, nil when the result came from a lock.
	Graph *Graph
	// FromLock is true when a matching lock was used and nothing was resolved.
	FromLock bool
}

// Source is what the graph builder needs from the repository chain. It is
// safe for concurrent use, and concurrent requests for the same file are
// merged.
type Source interface {
	// POM returns the POM of g:a:v from the first repository in the chain
	// that has it. When none has it, the error matches ErrNotFound and lists
	// every repository tried (without userinfo).
	POM(ctx context.Context, group, artifact, version string) (*POMFile, error)
	// Artifact makes the artifact available in the cache, verified, and
	// returns where it is. It is looked up in ref.Repo, the repository that
	// served the module's POM, as Ivy does.
	Artifact(ctx context.Context, ref ArtifactRef) (*CachedFile, error)
	// Versions lists the versions published for g:a (maven-metadata.xml, else
	// a directory listing), for dynamic revisions.
	Versions(ctx context.Context, group, artifact string) ([]string, error)
}

// The repository side's types, owned by resolver/repo.
type (
	ChecksumPolicy = repo.ChecksumPolicy
	Logger         = repo.Logger
	Repository     = repo.Repository
	POMFile        = repo.POMFile
	ArtifactRef    = repo.ArtifactRef
	CachedFile     = repo.CachedFile
)

// Checksum policies.
const (
	ChecksumStrict = repo.ChecksumStrict
	ChecksumWarn   = repo.ChecksumWarn // default
	ChecksumIgnore = repo.ChecksumIgnore
)

// ErrNotFound is matched (errors.Is) by every "module or artifact not found" error.
var ErrNotFound = repo.ErrNotFound
