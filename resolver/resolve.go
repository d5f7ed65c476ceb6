package resolver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/repo"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/lock"
)

// Resolve resolves req as spark-submit --packages would, with a lockfile:
//
//   - When req.LockPath holds a lock whose inputsHash matches req, the lock
//     is used: no request is made, cached blobs are trusted by their stamp
//     (VerifyBlob: stat plus a small read, else the blob is hashed) and
//     missing or modified ones are fetched from the repository the lock
//     records.
//   - When the lock is missing or stale and req.Frozen is set, the error is
//     of kind errdefs.Stale and says what changed. A lock that is there but
//     malformed (truncated) or not a regular file is errdefs.Invalid,
//     frozen or not.
//   - Otherwise the graph is built, every artifact is downloaded in parallel
//     into the cache, and the lock is written (atomically) to req.LockPath.
//
// Result.Paths are the cache paths of the locked artifacts, in lock order.
func Resolve(ctx context.Context, req Request, opts ...Option) (*Result, error) {
	r, err := resolve(ctx, req, opts)
	return r, interrupted(ctx, err)
}

// interrupted classifies the error of a run whose context ended (SIGINT,
// SIGTERM, a deadline) as errdefs.Timeout, as the stores and the registry
// client do: not the repository's failure.
func interrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errdefs.KindOf(err) == errdefs.Timeout {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errdefs.New(errdefs.Timeout, fmt.Errorf("interrupted: %w", err))
	}
	return err
}

func resolve(ctx context.Context, req Request, opts []Option) (*Result, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	if _, err := EffectiveIvy(req.SparkVersion, req.IvyVersion); err != nil {
		return nil, err
	}
	if err := ivySettingsConflict(ctx, req); err != nil {
		return nil, err
	}
	req.CacheDir = cache.Dir(req.CacheDir)
	// The chain is built once (its settings file read once) for the lock
	// check, the source and the signatures; a settings file's <offline>
	// acts as Request.Offline.
	chain, err := repo.NewChain(ctx, req.repoConfig(), o.repo...)
	if err != nil {
		return nil, err
	}
	if chain.Offline() {
		req.Offline = true
	}
	if w := repo.IvyHomeWarning(req.repoConfig()); w != "" {
		o.log.Printf("warning: %s", w)
	}
	in := canonicalInputs(req, chain)

	stale := ""
	if req.LockPath != "" {
		lf, err := lock.Read(req.LockPath)
		if err == nil {
			stale = inputsDiff(lf.Inputs, in)
		}
		if err == nil && req.Signatures != nil && !req.Frozen && lf.Inputs.InputsHash == in.InputsHash {
			if a := repo.Unsigned(lf.Jars()); a != nil { // signatures apply to jars only
				// Signatures are asked for and the lock has none: it is
				// resolved again and rewritten, as a stale one.
				stale = fmt.Sprintf("it records no signing key for %s", a.File)
				lf.Inputs.InputsHash = ""
			}
		}
		switch {
		case err == nil && lf.Inputs.InputsHash == in.InputsHash:
			paths, err := chain.FetchLocked(ctx, lf, req.CacheDir, req.Offline, false)
			if err != nil {
				return nil, err
			}
			if req.Signatures != nil {
				if err := chain.VerifySignatures(ctx, req.Signatures, lf.Jars(), req.CacheDir, req.Offline, true); err != nil {
					return nil, err
				}
			}
			return &Result{Lock: lf, Paths: paths, FromLock: true}, nil
		case err == nil && req.Frozen && onlyRepositoriesChanged(lf.Inputs, in):
			// A mirror in CI, a trailing slash, DEFAULT_ARTIFACT_REPOSITORY:
			// the same coordinates, so a frozen lock holds by its content
			// (every jar checked against its sha256). Not frozen, the
			// request is resolved again and the lock rewritten, as before.
			o.log.Printf("notice: %s", repositoriesNotice(req.LockPath, lf.Inputs, in))
			paths, err := chain.FetchLocked(ctx, lf, req.CacheDir, req.Offline, true)
			if err != nil {
				return nil, err
			}
			if req.Signatures != nil {
				if err := chain.VerifySignatures(ctx, req.Signatures, lf.Jars(), req.CacheDir, req.Offline, true); err != nil {
					return nil, err
				}
			}
			return &Result{Lock: lf, Paths: paths, FromLock: true}, nil
		case err == nil && req.Frozen:
			return nil, errdefs.Optionf(errdefs.Stale, "resolver.Request.Frozen", "lockfile %s is stale: %s", req.LockPath, inputsDiff(lf.Inputs, in))
		case err == nil && lf.HasPython():
			// Resolving again would rewrite the lock without its Python
			// half, which this resolver cannot resolve: refused.
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("lockfile %s is stale (%s) and has a Python half (inputs.python, %d wheels) that this resolution cannot write: %w; it is not rewritten",
				req.LockPath, inputsDiff(lf.Inputs, in), len(lf.Wheels()), lock.ErrUnsupportedKind))
		case err != nil && !errors.Is(err, os.ErrNotExist):
			// A malformed or unreadable lock is bad input, frozen or not:
			// resolving afresh would not fix it.
			return nil, err
		case err != nil && req.Frozen:
			return nil, errdefs.Optionf(errdefs.Stale, "resolver.Request.Frozen", "frozen: needs a lockfile matching the inputs: %w", err)
		}
	} else if req.Frozen {
		return nil, errdefs.Optionf(errdefs.Stale, "resolver.Request.LockPath", "frozen: needs a lockfile path")
	}

	src, err := chain.NewSource(req.repoConfig())
	if err != nil {
		return nil, err
	}
	// Jars and parent POMs start downloading as soon as a POM names them,
	// overlapping the graph walk; downloadAll then mostly waits on them.
	stop := src.StartSpeculation(ctx)
	defer stop()
	g, err := o.buildGraph(ctx, req, src, o.log)
	if rerr := src.RefusedErr(); rerr != nil {
		return nil, rerr // not "not found": prebake cannot reproduce it
	}
	if err != nil {
		return nil, err
	}
	lf := &lock.File{Inputs: in}
	arts, err := src.Download(ctx, g.Artifacts)
	if err != nil {
		return nil, err
	}
	lf.Artifacts = append(lf.Artifacts, arts...) // stays nil when there is none
	if req.Signatures != nil {
		// Before the lock is written: a lock never records an unverified set.
		if err := chain.VerifySignatures(ctx, req.Signatures, lf.Artifacts, req.CacheDir, req.Offline, false); err != nil {
			return nil, err
		}
	}
	if req.LockPath != "" {
		if err := lock.Write(req.LockPath, lf); err != nil {
			return nil, err
		}
		if stale != "" {
			// The file is often committed or mounted from a ConfigMap: a
			// rewrite is never silent.
			o.log.Printf("notice: lockfile %s was stale (%s): resolved again and rewritten", req.LockPath, stale)
		}
	} else {
		lf.Normalize()
	}
	paths := make([]string, len(lf.Artifacts))
	for i, a := range lf.Artifacts {
		paths[i] = cache.BlobPath(req.CacheDir, a.Sha256)
	}
	return &Result{Lock: lf, Paths: paths, Graph: g}, nil
}

// canonicalInputs are the inputs a lock records: coordinates and excludes
// split on "," as Spark does (no trimming), the chain without userinfo and
// the conflict mode.
func canonicalInputs(req Request, chain *repo.Chain) lock.Inputs {
	split := func(vs []string) []string {
		out := []string{}
		for _, v := range vs {
			for _, s := range strings.Split(v, ",") {
				if s != "" {
					out = append(out, s)
				}
			}
		}
		return out
	}
	conflict := req.Conflict
	if conflict == "" {
		conflict = ConflictLatest
	}
	in := lock.Inputs{
		Conflict:     conflict,
		Excludes:     split(req.Excludes),
		Packages:     split(req.Packages),
		Repositories: chain.Inputs(),
	}
	// A bad SparkVersion or IvyVersion fails in BuildGraph; here it
	// records nothing.
	if ivy, err := EffectiveIvy(req.SparkVersion, req.IvyVersion); err == nil {
		in.Ivy = lockIvy(ivy)
	}
	in.InputsHash = lock.ComputeInputsHash(in)
	return in
}

// onlyRepositoriesChanged reports whether a lock's inputs and the
// request's differ in their repositories alone: the same packages,
// excludes and conflict mode, so the lock's coordinates still answer the
// request and only where the jars come from changed.
func onlyRepositoriesChanged(old, cur lock.Inputs) bool {
	return old.InputsHash != cur.InputsHash && !slices.Equal(old.Repositories, cur.Repositories) &&
		slices.Equal(old.Packages, cur.Packages) && slices.Equal(old.Excludes, cur.Excludes) && old.Conflict == cur.Conflict && old.Ivy == cur.Ivy &&
		old.Python.Equal(cur.Python) // the wheels are part of the set
}

// repositoriesNotice says that a lock is used by content because only its
// repositories changed.
func repositoriesNotice(path string, old, cur lock.Inputs) string {
	return fmt.Sprintf("lockfile %s: only the repositories changed (%s); the lock's coordinates are used as they are, each jar fetched from the current repositories is checked against its sha256, and the lock is kept (resolving without frozen rewrites it)",
		path, strings.TrimPrefix(inputsDiff(old, cur), "repositories changed "))
}

// inputsDiff says what changed between a lock's inputs and the request's.
func inputsDiff(old, cur lock.Inputs) string {
	var d []string
	list := func(name string, a, b []string) {
		if slices.Equal(a, b) {
			return
		}
		d = append(d, fmt.Sprintf("%s changed from [%s] to [%s]", name, strings.Join(a, ","), strings.Join(b, ",")))
	}
	list("packages", old.Packages, cur.Packages)
	list("repositories", old.Repositories, cur.Repositories)
	list("excludes", old.Excludes, cur.Excludes)
	if old.Conflict != cur.Conflict {
		d = append(d, fmt.Sprintf("conflict changed from %s to %s", old.Conflict, cur.Conflict))
	}
	if !old.Python.Equal(cur.Python) {
		d = append(d, fmt.Sprintf("python inputs changed from %s to %s", old.Python, cur.Python))
	}
	if len(d) == 0 {
		return "inputsHash " + old.InputsHash + " does not match " + cur.InputsHash
	}
	return redact.String(strings.Join(d, "; "))
}

// FetchLocked makes every artifact of lock available in the cache
// req.CacheDir (cache.DefaultDir if empty) and returns their paths, in
// lock order. A blob already in the cache is verified (VerifyBlob: by its
// stamp, else hashed); a missing or modified one is fetched from the
// repository the lock records, checked against the lock's sha256, and
// replaces the bad copy. With req.Offline (or the settings' <offline>), a
// missing blob is an errdefs.Unavailable error, a modified one errdefs.Invalid.
//
// Of req, FetchLocked uses where the lock's repositories are reached:
// Repositories (comma-separated lists split; their userinfo credentials
// apply to the lock's repositories, matched without userinfo), Settings
// (the mirror and server credentials of settings.xml, and its <offline>),
// IvySettings (the layouts and <credentials> of its url and filesystem
// resolvers, with Repositories on top as Spark adds them), Offline and
// CacheDir. What to resolve (Packages, Excludes, Conflict) is the lock's.
func FetchLocked(ctx context.Context, lf *lock.File, req Request, opts ...Option) ([]string, error) {
	paths, err := fetchLockedReq(ctx, lf, req, opts)
	return paths, interrupted(ctx, err)
}

func fetchLockedReq(ctx context.Context, lf *lock.File, req Request, opts []Option) ([]string, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	chain, err := repo.LockedChain(ctx, req.repoConfig(), o.repo...)
	if err != nil {
		return nil, err
	}
	offline := chain.Offline()
	paths, err := chain.FetchLocked(ctx, lf, req.CacheDir, offline, false)
	if err != nil || req.Signatures == nil {
		return paths, err
	}
	return paths, chain.VerifySignatures(ctx, req.Signatures, lf.Jars(), req.CacheDir, offline, true)
}

// repoConfig is the I/O half of req: where its repositories are and how
// they are reached.
func (req Request) repoConfig() repo.Config {
	return repo.Config{
		Repositories:              req.Repositories,
		NoDefaultRepositories:     req.NoDefaultRepositories,
		Home:                      req.Home,
		DefaultArtifactRepository: req.DefaultArtifactRepository,
		Settings:                  req.Settings,
		IvySettings:               req.IvySettings,
		IvyHome:                   req.IvyHome,
		Offline:                   req.Offline,
		CacheDir:                  req.CacheDir,
		ChecksumPolicy:            req.ChecksumPolicy,
		UserAgent:                 req.UserAgent,
		MaxRetryWait:              req.MaxRetryWait,
	}
}
