package repo

import (
	"context"

	"github.com/prebake/prebake/lock"
)

// Chain is the repository chain of one call, built once (its settings
// file read once) and used for the lock check, the source, the locked
// fetch and the signatures, with the options it was built with.
type Chain struct {
	entries []*entry
	offline bool // the Maven settings' <offline>, or Config.Offline for a locked chain
	o       *options
}

// NewChain builds cfg's chain (spark-semantics §1.4): Config.Settings is
// read and applied, or Config.IvySettings read and flattened.
func NewChain(ctx context.Context, cfg Config, opts ...Option) (*Chain, error) {
	o, err := makeOptions(cfg.options(opts))
	if err != nil {
		return nil, err
	}
	entries, settings, err := chainFor(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	return &Chain{entries: entries, offline: settings != nil && settings.Offline, o: o}, nil
}

// LockedChain builds the chain a lock's jars are fetched through
// (FetchLocked): the lock's repositories reached with cfg's credentials,
// mirrors and layouts. Offline is cfg.Offline or the settings' <offline>.
func LockedChain(ctx context.Context, cfg Config, opts ...Option) (*Chain, error) {
	o, err := makeOptions(cfg.options(opts))
	if err != nil {
		return nil, err
	}
	entries, offline, err := lockedChain(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	return &Chain{entries: entries, offline: offline, o: o}, nil
}

// Offline reports whether the settings (or, for a locked chain, the
// Config) ask for no network request.
func (c *Chain) Offline() bool { return c.offline }

// Inputs is the chain as a lock's inputs record it: URLs without
// userinfo, ~/.m2 written home-independently. A nil Chain has none.
func (c *Chain) Inputs() []string {
	if c == nil {
		return inputsRepositories(nil)
	}
	return inputsRepositories(c.entries)
}

// Repositories returns the chain (without userinfo), in lookup order.
func (c *Chain) Repositories() []Repository {
	out := make([]Repository, len(c.entries))
	for i, r := range c.entries {
		out[i] = r.Repository
	}
	return out
}

// NewSource is the Source of cfg over the chain, backed by the
// content-addressed cache cfg.CacheDir.
func (c *Chain) NewSource(cfg Config) (*Source, error) { return newSource(cfg, c.entries, c.o) }

// FetchLocked makes every artifact of lf available in the cache cacheDir,
// verified against the lock's sha256, and returns their paths in lock
// order (see resolver.FetchLocked). byContent fetches each jar from the
// chain's repositories by its coordinates when the lock's repositories
// are not the chain's.
func (c *Chain) FetchLocked(ctx context.Context, lf *lock.File, cacheDir string, offline, byContent bool) ([]string, error) {
	return fetchLocked(ctx, lf, cacheDir, c.entries, offline, byContent, c.o)
}

// VerifySignatures checks every artifact's signature with v (see
// SignatureVerifier); locked says the artifacts come from a lock, which
// must record their signers.
func (c *Chain) VerifySignatures(ctx context.Context, v SignatureVerifier, arts []lock.Artifact, cacheDir string, offline, locked bool) error {
	return verifySignatures(ctx, v, arts, cacheDir, c.entries, offline, locked, c.o)
}

// Download fetches refs into the cache, WithParallel at a time, and
// returns them as a lock's artifacts in spark.jars order.
func (s *Source) Download(ctx context.Context, refs []ArtifactRef) ([]lock.Artifact, error) {
	return downloadAll(ctx, s, refs, s.parallel)
}
