package repo

// Signature verification (Config.Signatures): every locked jar's detached
// OpenPGP signature (<jar>.asc, which Maven Central requires) is fetched
// from the repository the jar came from, verified against the pinned
// keyring, and its signer's fingerprint recorded in the lock (signedBy).
// Only jars are checked, not POMs: a lock pins jars, and a frozen lock is
// used without its POMs (see the README).
//
// A verified signature is cached by its jar's sha256 under the user's cache
// (<cache>/signatures/sha256/<hex>.asc), so a frozen lock is checked again
// offline: the fingerprints it records against the keyring, the cached
// signatures against the jars.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/lock"

	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/safepath"
)

// SignatureVerifier checks detached signatures against pinned keys
// (internal/pgpverify's Keyring is one).
type SignatureVerifier interface {
	// Verify checks sig over signed at now (the zero time: the current
	// time) and returns the primary fingerprint of the key that made it.
	Verify(signed io.ReadSeeker, sig []byte, now time.Time) (string, error)
	// Has reports whether fingerprint is a pinned key.
	Has(fingerprint string) bool
}

// ErrSignatureMissing is matched (errors.Is) when a repository has no
// signature (.asc) for a jar, or an offline run has none cached.
var ErrSignatureMissing = errors.New("no signature")

// ErrSignatureMismatch is matched when a jar verifies with another key
// than the one its lock records.
var ErrSignatureMismatch = errors.New("signed by another key than the lock records")

// signaturesOption names Config.Signatures in errors (the CLI hints at
// its flags).
const signaturesOption = "resolver.Request.Signatures"

// maxSignatureSize bounds a fetched .asc (a real one is under 1 KiB).
const maxSignatureSize = 64 << 10

// SignaturePath is where the cache keeps the verified signature of the jar
// with the given sha256 (hex).
func SignaturePath(cacheDir, sha256Hex string) string {
	return filepath.Join(cachedir.Root(cacheDir), "signatures", "sha256", sha256Hex+".asc")
}

// Unsigned returns the first artifact of arts that records no signer, or nil.
func Unsigned(arts []lock.Artifact) *lock.Artifact {
	for i := range arts {
		if arts[i].SignedBy == "" {
			return &arts[i]
		}
	}
	return nil
}

// verifySignatures checks the signature of every artifact of arts. With
// locked, each must verify with the key its SignedBy records (and that key
// be pinned); else SignedBy is set to the signer. Errors are
// errdefs.Invalid naming the artifact (a missing or bad signature, an
// unpinned or expired key), errdefs.Unavailable when a repository cannot
// be reached or an offline run has no cached signature.
func verifySignatures(ctx context.Context, v SignatureVerifier, arts []lock.Artifact, cacheDir string, chain []*entry, offline, locked bool, o *options) error {
	cacheDir = cache.Dir(cacheDir)
	openOnce := sync.OnceValues(func() (*cache.Cache, error) { return cache.Open(cacheDir, privateChain(chain), o.log) })
	f := newFetcher(o)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.parallel)
	for i := range arts {
		a := &arts[i]
		g.Go(func() error {
			if locked {
				if err := checkSigner(v, *a); err != nil {
					return err
				}
			}
			sigPath := SignaturePath(cacheDir, a.Sha256)
			where := sigPath
			sig, err := readFileMax(sigPath, maxSignatureSize)
			cached := err == nil
			if !cached {
				if where, sig, err = fetchSignature(gctx, f, chain, *a, offline); err != nil {
					return err
				}
			}
			fp, err := verifyBlobSignature(v, cache.BlobPath(cacheDir, a.Sha256), sig)
			if err != nil {
				return errdefs.Optionf(errdefs.Invalid, signaturesOption, "artifact %s (%s): signature %s: %w", a.File, a.Coord, where, err)
			}
			if locked && fp != a.SignedBy {
				return errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %s (%s): %w: signed by %s, the lock records %s", a.File, a.Coord, ErrSignatureMismatch, fp, a.SignedBy))
			}
			a.SignedBy = fp
			if cached {
				return nil
			}
			c, err := openOnce()
			if err != nil {
				return err
			}
			if err := c.WriteAtomic(sigPath, sig); err != nil {
				return errdefs.New(errdefs.CantWrite, fmt.Errorf("caching the signature of %s: %w", a.File, err))
			}
			return nil
		})
	}
	return g.Wait()
}

// checkSigner checks that a locked artifact records a signer that is
// pinned: errdefs.Stale when it records none, errdefs.Invalid when the
// keyring does not hold it.
func checkSigner(v SignatureVerifier, a lock.Artifact) error {
	if a.SignedBy == "" {
		return errdefs.New(errdefs.Stale, fmt.Errorf("artifact %s (%s): the lock records no signing key: %w; resolve again with signatures verified", a.File, a.Coord, ErrSignatureMissing))
	}
	if !v.Has(a.SignedBy) {
		return errdefs.Optionf(errdefs.Invalid, signaturesOption, "artifact %s (%s): the lock says it is signed by %s, which is not in the keyring", a.File, a.Coord, a.SignedBy)
	}
	return nil
}

// CheckSigners is checkSigner on every artifact.
func CheckSigners(v SignatureVerifier, arts []lock.Artifact) error {
	for _, a := range arts {
		if err := checkSigner(v, a); err != nil {
			return err
		}
	}
	return nil
}

func verifyBlobSignature(v SignatureVerifier, blob string, sig []byte) (string, error) {
	f, err := os.Open(blob)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return v.Verify(f, sig, time.Time{})
}

// fetchSignature gets <jar>.asc from the repository the artifact records
// (chain gives its credentials and layout). It returns the URL it read.
func fetchSignature(ctx context.Context, f *fetcher, chain []*entry, a lock.Artifact, offline bool) (string, []byte, error) {
	r, err := lockedRepo(chain, a)
	if err != nil {
		return "", nil, err
	}
	if offline && !r.isFile() {
		return "", nil, errdefs.New(errdefs.Unavailable, fmt.Errorf("artifact %s (%s): %w in the cache, and offline: %w", a.File, a.Coord, ErrSignatureMissing, cache.ErrNotCached))
	}
	rel, err := lockedRelFetch(ctx, f, r, a, offline)
	if err != nil {
		return "", nil, err
	}
	rel += ".asc"
	if err := safepath.Rel(rel); err != nil {
		return "", nil, errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %s: %w", a.File, err))
	}
	u := redact.StripUserinfo(r.base + rel)
	missing := func() error {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %s (%s): %w: %s is not in the repository", a.File, a.Coord, ErrSignatureMissing, u))
	}
	if r.isFile() {
		p, err := safepath.Join(r.dir, rel)
		if err != nil {
			return "", nil, errdefs.New(errdefs.Invalid, err)
		}
		data, err := readFileMax(p, maxSignatureSize)
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, missing()
		}
		if err != nil {
			return "", nil, errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %s: %s: %w", a.File, u, err))
		}
		return u, data, nil
	}
	m := &memBuf{max: maxSignatureSize}
	if err := f.get(ctx, r.target(rel), m); err != nil {
		if errors.Is(err, ErrNotFound) {
			return "", nil, missing()
		}
		return "", nil, fmt.Errorf("artifact %s: signature: %w", a.File, err)
	}
	return u, m.b, nil
}

// lockedRepo is the repository of chain whose URL the artifact records
// (for its credentials and layout), else one parsed from that URL.
func lockedRepo(chain []*entry, a lock.Artifact) (*entry, error) {
	for _, cr := range chain {
		if cr.URL == a.Repository {
			return cr, nil
		}
	}
	return parseRepo("locked", a.Repository)
}
