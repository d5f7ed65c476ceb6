package resolver

import (
	"context"
	"time"

	"github.com/prebake/prebake/resolver/repo"
)

// The calls below take a Request and hand its I/O half to resolver/repo,
// which owns the chain, the fetch and the signatures.

// SignatureVerifier checks a jar's OpenPGP signature (repo.SignatureVerifier).
type SignatureVerifier = repo.SignatureVerifier

// RepositoryProbe is what ProbeChain found of one repository.
type RepositoryProbe = repo.RepositoryProbe

// DefaultProbeTimeout bounds each probe of ProbeChain when it is given none.
const DefaultProbeTimeout = repo.DefaultProbeTimeout

// ErrChecksumMismatch is matched (errors.Is) when a file's bytes do not
// match its checksum.
var ErrChecksumMismatch = repo.ErrChecksumMismatch

// NewSource returns a Source over Spark's repository chain for req, backed
// by the content-addressed cache req.CacheDir (the default cache directory
// if empty). It is safe for concurrent use and merges concurrent requests
// for a file.
func NewSource(ctx context.Context, req Request, opts ...Option) (Source, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return repo.NewSource(ctx, req.repoConfig(), o.repo...)
}

// ProbeChain asks every repository of req's chain whether it answers
// (repo.ProbeChain), each within timeout (DefaultProbeTimeout if 0).
func ProbeChain(ctx context.Context, req Request, timeout time.Duration, opts ...Option) ([]RepositoryProbe, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return repo.ProbeChain(ctx, req.repoConfig(), timeout, o.repo...)
}

var _ Source = (*repo.Source)(nil)
