package resolver

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver/repo"
)

// ErrStaleLock is matched (errors.Is) when a lockfile exists but does not
// match the request's inputs.
var ErrStaleLock = errors.New("stale lockfile")

// LockFor returns the lockfile at req.LockPath when it matches req's inputs,
// without any network request and without touching the cache: a caller that
// already has the jars elsewhere (an S3 set named by the lock hash) needs
// nothing more. A missing lock matches os.ErrNotExist; a stale one matches
// ErrStaleLock and says what changed.
func LockFor(ctx context.Context, req Request, opts ...Option) (*lock.File, error) {
	if req.LockPath == "" {
		return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("no lockfile given: %w", os.ErrNotExist))
	}
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	chain, err := repo.NewChain(ctx, req.repoConfig(), o.repo...)
	if err != nil {
		return nil, err
	}
	in := canonicalInputs(req, chain)
	lock, err := lock.Read(req.LockPath)
	if err != nil {
		return nil, err
	}
	if lock.Inputs.InputsHash != in.InputsHash && !(req.Frozen && onlyRepositoriesChanged(lock.Inputs, in)) {
		return nil, errdefs.New(errdefs.Stale, fmt.Errorf("lockfile %s: %w: %s", req.LockPath, ErrStaleLock, inputsDiff(lock.Inputs, in)))
	}
	if req.Signatures != nil {
		// No jar is read here: the lock must record a pinned signer for
		// every jar (the signatures were verified when it was written).
		if err := repo.CheckSigners(req.Signatures, lock.Jars()); err != nil { // signatures are the jars
			return nil, err
		}
	}
	if lock.Inputs.InputsHash != in.InputsHash {
		o.log.Printf("notice: %s", repositoriesNotice(req.LockPath, lock.Inputs, in))
	}
	return lock, nil
}
