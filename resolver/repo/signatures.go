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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/lock"

	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/pgpverify"
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
	return cachedir.At(cacheDir).Signature(sha256Hex)
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
// errdefs.Invalid naming the artifact (a missing signature), or every
// artifact whose signature fails (see signatureFailures: all of them, so
// that one run names every key to pin), errdefs.Unavailable when a
// repository cannot be reached or an offline run has no cached signature.
func verifySignatures(ctx context.Context, v SignatureVerifier, arts []lock.Artifact, cacheDir string, chain []*entry, offline, locked bool, o *options) error {
	cacheDir = cache.Dir(cacheDir)
	openOnce := sync.OnceValues(func() (*cache.Cache, error) { return cache.Open(cacheDir, privateChain(chain), o.log) })
	f := newFetcher(o)
	var (
		mu    sync.Mutex
		fails []sigFailure
	)
	failed := func(x sigFailure) {
		mu.Lock()
		defer mu.Unlock()
		fails = append(fails, x)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.parallel)
	for i := range arts {
		a := &arts[i]
		g.Go(func() error {
			if locked {
				if a.SignedBy == "" {
					return noSigner(*a)
				}
				if !v.Has(a.SignedBy) {
					failed(sigFailure{i: i, a: *a, issuer: a.SignedBy, err: errLockedUnpinned})
					return nil
				}
			}
			sigPath := SignaturePath(cacheDir, a.Sha256)
			where := sigPath
			sig, err := readFileMax(sigPath, maxSignatureSize)
			cached := err == nil
			if !cached {
				if where, sig, err = fetchSignature(gctx, f, chain, *a, offline); err != nil {
					if errors.Is(err, ErrSignatureMissing) && errdefs.KindOf(err) == errdefs.Invalid {
						failed(sigFailure{i: i, a: *a, err: err, missing: true}) // the repository has none: reported with the rest
						return nil
					}
					return err
				}
			}
			fp, err := verifyBlobSignature(v, cache.BlobPath(cacheDir, a.Sha256), sig)
			if errors.Is(err, pgpverify.ErrSignature) {
				x := sigFailure{i: i, a: *a, where: where, err: err}
				if errors.Is(err, pgpverify.ErrUnknownKey) {
					x.issuer = pgpverify.Issuer(sig)
				}
				failed(x)
				return nil
			}
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
	if err := g.Wait(); err != nil {
		return err
	}
	return signatureFailures(fails)
}

// errLockedUnpinned is a locked artifact whose recorded signer the keyring
// does not hold.
var errLockedUnpinned = errors.New("the lock records its signer, which is not in the keyring")

// sigFailure is an artifact whose signature did not verify.
type sigFailure struct {
	i      int // its index, for a stable order
	a      lock.Artifact
	where  string // the signature's path or URL
	issuer string // the key it names, when that key is not pinned
	// missing: the repository has no signature for it (err says where).
	missing bool
	err     error
}

// SignaturesError reports every artifact of a run whose signature failed.
// It matches (errors.Is) each failure's own error: pgpverify.ErrBad,
// pgpverify.ErrUnknownKey, pgpverify.ErrExpired.
type SignaturesError struct {
	// Unknown lists, per key not in the keyring (its fingerprint or key
	// ID, in the order first met), the files it signs.
	Unknown []UnknownSigner
	// Bad lists the files whose signature does not verify over them.
	Bad []string
	// Missing lists the files whose repository has no signature for them.
	Missing []string
	msg     string
	errs    []error
}

// UnknownSigner is a key that signs artifacts and is not in the keyring.
type UnknownSigner struct {
	Issuer string
	Files  []string
}

func (e *SignaturesError) Error() string   { return e.msg }
func (e *SignaturesError) Unwrap() []error { return e.errs }

// signatureFailures is the one error for every failed signature of a run,
// nil for none. A bad signature (the jar or its signature altered) is
// errdefs.Invalid with no option: pinning a key cannot fix it. Otherwise
// (keys not pinned, or expired) it names signaturesOption and every key
// at once, so one run tells what to pin; signatures a repository lacks are
// listed too (alone, they name no option either).
func signatureFailures(fails []sigFailure) error {
	if len(fails) == 0 {
		return nil
	}
	slices.SortFunc(fails, func(x, y sigFailure) int { return x.i - y.i })
	e := &SignaturesError{}
	var bad, other, missing []string
	byIssuer := map[string]int{}
	for _, x := range fails {
		e.errs = append(e.errs, x.err)
		name := fmt.Sprintf("%s (%s)", x.a.File, x.a.Coord)
		switch {
		case x.missing:
			e.Missing = append(e.Missing, x.a.File)
			missing = append(missing, x.err.Error())
		case errors.Is(x.err, pgpverify.ErrBad):
			e.Bad = append(e.Bad, x.a.File)
			bad = append(bad, fmt.Sprintf("artifact %s: signature %s: %v", name, x.where, x.err))
		case x.issuer != "":
			k, ok := byIssuer[x.issuer]
			if !ok {
				k = len(e.Unknown)
				byIssuer[x.issuer] = k
				e.Unknown = append(e.Unknown, UnknownSigner{Issuer: x.issuer})
			}
			e.Unknown[k].Files = append(e.Unknown[k].Files, name)
		default:
			other = append(other, fmt.Sprintf("artifact %s: signature %s: %v", name, x.where, x.err))
		}
	}
	var parts []string
	if len(e.Unknown) > 0 {
		var keys []string
		for _, u := range e.Unknown {
			keys = append(keys, fmt.Sprintf("issuer %s signs %s", u.Issuer, strings.Join(u.Files, ", ")))
		}
		n := countFiles(e.Unknown)
		parts = append(parts, fmt.Sprintf("%d %s by %d %s that %s not in the keyring (%s): %s",
			n, plural(n, "artifact is signed", "artifacts are signed"), len(e.Unknown),
			plural(len(e.Unknown), "key", "keys"), plural(len(e.Unknown), "is", "are"),
			plural(len(e.Unknown), "pin it if you trust it", "pin each one you trust, all in one go"), strings.Join(keys, "; ")))
	}
	parts = append(parts, other...)
	keyed := len(parts) > 0 // what pinning (or refreshing) a key can fix
	parts = append(parts, missing...)
	if len(bad) > 0 {
		e.msg = fmt.Sprintf("%s: the jar or its signature is not what the signer published (altered in the repository, a proxy or on the way, or a signature of another file); pinning a key does not fix this: do not use the jar, and check the repository it came from",
			strings.Join(bad, "; "))
		if len(parts) > 0 {
			e.msg += "; also: " + strings.Join(parts, "; ")
		}
		return errdefs.New(errdefs.Invalid, e)
	}
	e.msg = strings.Join(parts, "; ")
	if !keyed {
		return errdefs.New(errdefs.Invalid, e)
	}
	return errdefs.Optionf(errdefs.Invalid, signaturesOption, "%w", e)
}

func countFiles(us []UnknownSigner) int {
	n := 0
	for _, u := range us {
		n += len(u.Files)
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// noSigner is the error of a locked artifact that records no signer:
// errdefs.Stale (the lock predates verification).
func noSigner(a lock.Artifact) error {
	return errdefs.New(errdefs.Stale, fmt.Errorf("artifact %s (%s): the lock records no signing key: %w; resolve again with signatures verified", a.File, a.Coord, ErrSignatureMissing))
}

// CheckSigners checks that every locked artifact records a signer
// (errdefs.Stale if one does not) that the keyring holds, naming every
// signer it does not hold in one error (see signatureFailures).
func CheckSigners(v SignatureVerifier, arts []lock.Artifact) error {
	var fails []sigFailure
	for i, a := range arts {
		if a.SignedBy == "" {
			return noSigner(a)
		}
		if !v.Has(a.SignedBy) {
			fails = append(fails, sigFailure{i: i, a: a, issuer: a.SignedBy, err: errLockedUnpinned})
		}
	}
	return signatureFailures(fails)
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
