package resolver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prebake/prebake/resolver/cache"

	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/maven"
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
	if _, err := IvyOf(req.SparkVersion); err != nil {
		return nil, err
	}
	if req.CacheDir == "" {
		req.CacheDir = cache.DefaultDir(os.Getenv)
	}
	// The chain is built once (its settings file read once) for the lock
	// check, the source and the signatures; --settings' <offline> acts as
	// --offline.
	chain, settings, err := chainFor(ctx, req, o)
	if err != nil {
		return nil, err
	}
	if settings != nil && settings.Offline {
		req.Offline = true
	}
	if w := ivyHomeWarning(req); w != "" {
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
			if a := unsigned(lf.Artifacts); a != nil {
				// Signatures are asked for and the lock has none: it is
				// resolved again and rewritten, as a stale one.
				stale = fmt.Sprintf("it records no signing key for %s", a.File)
				lf.Inputs.InputsHash = ""
			}
		}
		switch {
		case err == nil && lf.Inputs.InputsHash == in.InputsHash:
			paths, err := fetchLocked(ctx, lf, req.CacheDir, chain, req.Offline, false, o)
			if err != nil {
				return nil, err
			}
			if req.Signatures != nil {
				if err := verifySignatures(ctx, req.Signatures, lf.Artifacts, req.CacheDir, chain, req.Offline, true, o); err != nil {
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
			paths, err := fetchLocked(ctx, lf, req.CacheDir, chain, req.Offline, true, o)
			if err != nil {
				return nil, err
			}
			if req.Signatures != nil {
				if err := verifySignatures(ctx, req.Signatures, lf.Artifacts, req.CacheDir, chain, req.Offline, true, o); err != nil {
					return nil, err
				}
			}
			return &Result{Lock: lf, Paths: paths, FromLock: true}, nil
		case err == nil && req.Frozen:
			return nil, errdefs.Optionf(errdefs.Stale, "resolver.Request.Frozen", "lockfile %s is stale: %s", req.LockPath, inputsDiff(lf.Inputs, in))
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

	src, err := newSource(req, chain, o)
	if err != nil {
		return nil, err
	}
	// Jars and parent POMs start downloading as soon as a POM names them,
	// overlapping the graph walk; downloadAll then mostly waits on them.
	stop := src.startSpeculation(ctx)
	defer stop()
	g, err := o.buildGraph(ctx, req, src, o.log)
	if rerr, ok := src.refused.Load(""); ok {
		return nil, rerr.(error) // not "not found": prebake cannot reproduce it
	}
	if err != nil {
		return nil, err
	}
	lf := &lock.File{Inputs: in}
	files, err := downloadAll(ctx, src, g.Artifacts, o.parallel)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		lf.Artifacts = append(lf.Artifacts, f.art)
	}
	if req.Signatures != nil {
		// Before the lock is written: a lock never records an unverified set.
		if err := verifySignatures(ctx, req.Signatures, lf.Artifacts, req.CacheDir, chain, req.Offline, false, o); err != nil {
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

type lockedFile struct {
	art  lock.Artifact
	path string
}

// downloadAll fetches the jar artifacts of a graph in parallel (bounded),
// one per Spark file name (Spark 3.5 skips non-jar artifacts).
func downloadAll(ctx context.Context, src *source, refs []ArtifactRef, parallel int) ([]lockedFile, error) {
	var todo []ArtifactRef
	seen := map[string]bool{}
	for _, ref := range refs {
		if ref.Ext != "" && ref.Ext != "jar" {
			src.log.Printf("Skipping non-jar dependency %s:%s:%s (%s)", ref.Group, ref.Artifact, ref.Version, ref.Ext)
			continue
		}
		name := SparkFileName(ref.Group, ref.Artifact, ref.Version, ref.Classifier, "jar")
		if seen[name] {
			continue
		}
		if err := safepath.Name(name); err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("module %s:%s:%s: %w", maven.Quote(ref.Group), maven.Quote(ref.Artifact), maven.Quote(ref.Version), err))
		}
		seen[name] = true
		todo = append(todo, ref)
	}
	out := make([]lockedFile, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, ref := range todo {
		g.Go(func() error {
			cf, err := src.Artifact(gctx, ref)
			if err != nil {
				return err
			}
			coord := ref.Group + ":" + ref.Artifact + ":" + ref.Version
			if ref.Classifier != "" {
				coord += ":" + ref.Classifier
			}
			out[i] = lockedFile{
				art: lock.Artifact{
					Coord:      coord,
					File:       SparkFileName(ref.Group, ref.Artifact, ref.Version, ref.Classifier, "jar"),
					Repository: redact.StripUserinfo(servedBy(ref, cf).URL),
					Sha256:     cf.Sha256,
					Size:       cf.Size,
				},
				path: cf.Path,
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// canonicalInputs are the inputs a lock records: coordinates and excludes
// split on "," as Spark does (no trimming), the chain without userinfo and
// the conflict mode.
func canonicalInputs(req Request, chain []*repo) lock.Inputs {
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
		Repositories: inputsRepositories(chain),
	}
	// A bad SparkVersion fails in BuildGraph; here it records nothing.
	in.Ivy, _ = IvyOf(req.SparkVersion)
	in.InputsHash = lock.ComputeInputsHash(in)
	return in
}

// onlyRepositoriesChanged reports whether a lock's inputs and the
// request's differ in their repositories alone: the same packages,
// excludes and conflict mode, so the lock's coordinates still answer the
// request and only where the jars come from changed.
func onlyRepositoriesChanged(old, cur lock.Inputs) bool {
	return old.InputsHash != cur.InputsHash && !slices.Equal(old.Repositories, cur.Repositories) &&
		slices.Equal(old.Packages, cur.Packages) && slices.Equal(old.Excludes, cur.Excludes) && old.Conflict == cur.Conflict && old.Ivy == cur.Ivy
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
	if len(d) == 0 {
		return "inputsHash " + old.InputsHash + " does not match " + cur.InputsHash
	}
	return redact.String(strings.Join(d, "; "))
}

// FetchLocked makes every artifact of lock available in the cache
// req.CacheDir (DefaultCacheDir() if empty) and returns their paths, in
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
	chain, offline, err := lockedChain(ctx, req, o)
	if err != nil {
		return nil, err
	}
	paths, err := fetchLocked(ctx, lf, req.CacheDir, chain, offline, false, o)
	if err != nil || req.Signatures == nil {
		return paths, err
	}
	return paths, verifySignatures(ctx, req.Signatures, lf.Artifacts, req.CacheDir, chain, offline, true, o)
}

// lockedChain is the chain FetchLocked matches a lock's repositories
// against: the Ivy settings' resolvers, then the settings' server
// credentials (first: the first entry whose URL matches wins), then
// req.Repositories. offline is req.Offline or the settings' <offline>.
func lockedChain(ctx context.Context, req Request, o *options) (chain []*repo, offline bool, err error) {
	var repos []string
	for _, r := range req.Repositories {
		for _, u := range strings.Split(r, ",") {
			if u = strings.TrimSpace(u); u != "" {
				repos = append(repos, u)
			}
		}
	}
	if req.IvySettings != "" {
		if chain, err = ivyChainFor(ctx, Request{IvySettings: req.IvySettings, Repositories: repos, Home: req.Home}, o); err != nil {
			return nil, false, err
		}
	}
	creds, offline := repos, req.Offline
	if req.Settings != "" {
		s, err := settingsFor(req, o)
		if err != nil {
			return nil, false, err
		}
		base := Request{Repositories: repos, Home: req.Home, DefaultArtifactRepository: req.DefaultArtifactRepository}
		if creds, err = settingsCredentials(ctx, base, s, o); err != nil {
			return nil, false, err
		}
		creds = append(creds, repos...)
		offline = offline || s.Offline
	}
	for i, u := range creds {
		r, err := parseRepo(fmt.Sprintf("creds-%d", i+1), u)
		if err != nil {
			return nil, false, err
		}
		chain = append(chain, r)
	}
	return chain, offline, nil
}

// fetchLocked makes the lock's jars available in the cache. A missing jar
// comes from the repository the lock records (chain gives its mirror and
// credentials); with byContent (only the repositories changed) a jar whose
// locked repository is not in chain comes from chain's repositories in
// order, its sha256 the lock's.
func fetchLocked(ctx context.Context, lf *lock.File, cacheDir string, chain []*repo, offline, byContent bool, o *options) ([]string, error) {
	if cacheDir == "" {
		cacheDir = cache.DefaultDir(os.Getenv)
	}
	if err := lf.Check(); err != nil {
		return nil, errdefs.New(errdefs.Invalid, err)
	}
	paths := make([]string, len(lf.Artifacts))
	var missing []int
	bad := map[int]error{}
	stamps := cache.StampDir(cacheDir, true)
	for i, a := range lf.Artifacts {
		paths[i] = cache.BlobPath(cacheDir, a.Sha256)
		// A stamped blob costs a stat and a small read; one modified after
		// it was written is fetched again (repaired) like a missing one.
		if err := cache.VerifyFile(stamps, paths[i], a.Sha256, a.Size); err != nil {
			if errors.Is(err, cache.ErrCorruptBlob) {
				bad[i] = err
				o.log.Printf("%s: %v; fetching it again", a.File, err)
			}
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return paths, nil
	}
	c, err := cache.Open(cacheDir, privateChain(chain), o.log)
	if err != nil {
		return nil, err
	}
	f := o.newFetcher()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.parallel)
	for _, i := range missing {
		a := lf.Artifacts[i]
		g.Go(func() error { return fetchLockedOne(gctx, c, f, chain, a, offline, byContent, bad[i]) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return paths, nil
}

// lockedRel is the m2 path of a locked artifact, from its coordinate; a
// SNAPSHOT's timestamped file name comes from readMeta (see snapshot.go).
func lockedRel(a lock.Artifact, readMeta func(rel string) ([]byte, error)) (string, error) {
	p, cls, err := lockedCoord(a)
	if err != nil {
		return "", err
	}
	dir := modulePath(p[0], p[1], p[2])
	names := snapshotFileNames(p[1], p[2], cls, "jar", func() ([]byte, error) { return readMeta(dir + "maven-metadata.xml") })
	return dir + names[0], nil
}

// lockedCoord splits a locked artifact's g:a:v[:classifier].
func lockedCoord(a lock.Artifact) (gav []string, classifier string, err error) {
	p := strings.Split(a.Coord, ":")
	if len(p) != 3 && len(p) != 4 {
		return nil, "", errdefs.Errorf(errdefs.Invalid, "lockfile artifact %s: coord %q is not g:a:v[:classifier]", a.File, a.Coord)
	}
	if len(p) == 4 {
		classifier = p[3]
	}
	return p[:3], classifier, nil
}

// bad is the blob's verification error when a corrupt copy is in the
// cache (nil when it is missing).
func fetchLockedOne(ctx context.Context, c *cache.Cache, f *fetcher, chain []*repo, a lock.Artifact, offline, byContent bool, bad error) error {
	var err error
	r := &repo{}
	for _, cr := range chain {
		if cr.URL == a.Repository {
			r = cr
			break
		}
	}
	if r.base == "" && byContent && len(chain) > 0 {
		// The lock's repository is not in the chain (a mirror replaced it):
		// the first repository of the chain that has the jar serves it.
		// One that is unreachable is passed over, and named if none has it.
		var tried []string
		var unavailable error
		for _, cr := range chain {
			err = fetchLockedFrom(ctx, c, f, cr, a, offline, bad)
			switch errdefs.KindOf(err) {
			case errdefs.NotFound:
			case errdefs.Unavailable:
				unavailable = err
			default:
				return err
			}
			tried = append(tried, redact.URL(cr.URL))
		}
		if unavailable != nil {
			return unavailable
		}
		return errdefs.New(errdefs.NotFound, fmt.Errorf("locked artifact %s (%s) is in none of the repositories [%s]: %w", a.File, a.Coord, strings.Join(tried, ","), ErrNotFound))
	}
	if r.base == "" {
		if r, err = parseRepo("locked", a.Repository); err != nil {
			return err
		}
	}
	return fetchLockedFrom(ctx, c, f, r, a, offline, bad)
}

// lockedRelFetch is lockedRelIn, a SNAPSHOT's metadata read from r.
func lockedRelFetch(ctx context.Context, f *fetcher, r *repo, a lock.Artifact, offline bool) (string, error) {
	return lockedRelIn(r, a, func(rel string) ([]byte, error) {
		if r.isFile() {
			p, err := safepath.Join(r.dir, rel)
			if err != nil {
				return nil, errdefs.New(errdefs.Invalid, err)
			}
			return readFileMax(p, maxMetadataSize)
		}
		if offline {
			return nil, cache.ErrNotCached
		}
		m := &memBuf{max: 1 << 20}
		if err := f.get(ctx, r.target(rel), m); err != nil {
			return nil, err
		}
		return m.b, nil
	})
}

// fetchLockedFrom fetches a locked jar from r into the cache, checked
// against the lock's sha256.
func fetchLockedFrom(ctx context.Context, c *cache.Cache, f *fetcher, r *repo, a lock.Artifact, offline bool, bad error) error {
	rel, err := lockedRelFetch(ctx, f, r, a, offline)
	if err != nil {
		return err
	}
	u := r.base + rel
	if err := safepath.Rel(rel); err != nil {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("locked artifact %s: %w", a.File, err))
	}
	if r.isFile() {
		p, err := safepath.Join(r.dir, rel)
		if err != nil {
			return errdefs.New(errdefs.Invalid, fmt.Errorf("locked artifact %s: %w", a.File, err))
		}
		sum, _, err := c.PutFile(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return errdefs.New(errdefs.NotFound, fmt.Errorf("locked artifact %s: %s: %w", a.File, u, ErrNotFound))
			}
			return errdefs.New(errdefs.CantWrite, err)
		}
		if sum.SHA256 != a.Sha256 {
			return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s: sha256 is %s, the lock says %s", ErrChecksumMismatch, u, sum.SHA256, a.Sha256))
		}
		return nil
	}
	if offline && bad != nil {
		return errdefs.New(errdefs.Invalid, &errdefs.OptionError{Option: "resolver.Request.Offline", Err: fmt.Errorf("locked artifact %s: %w; offline, so it is not fetched again from %s", a.File, bad, u)})
	}
	if offline {
		return errdefs.New(errdefs.Unavailable, fmt.Errorf("locked artifact %s (%s) is not in the cache %s: %w", a.File, u, c.Dir, cache.ErrNotCached))
	}
	t, err := c.NewTemp()
	if err != nil {
		return err
	}
	defer t.Abort()
	// The lock gives the size: one byte more is bad input, and the body
	// stops there (never fills the disk).
	td := f.track(u, &capDest{w: fileDest{t}, max: a.Size})
	err = f.get(ctx, r.target(rel), td)
	td.done(err)
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("locked artifact %s (the lock says %d bytes): %w", a.File, a.Size, err)
	}
	if err != nil {
		return fmt.Errorf("locked artifact %s: %w", a.File, err)
	}
	sum := t.Sums()
	if sum.SHA256 != a.Sha256 {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s: sha256 is %s, the lock says %s", ErrChecksumMismatch, u, sum.SHA256, a.Sha256))
	}
	if _, err := t.Commit(); err != nil {
		return err
	}
	return c.Record(u, cache.IndexEntry{Sha256: sum.SHA256, Size: sum.Size})
}
