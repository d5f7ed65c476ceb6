package repo

// Artifacts into the cache: a graph's (downloadAll) or a lock's
// (fetchLocked, from the chain lockedChain builds).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/maven"
	"github.com/prebake/prebake/resolver/cache"
)

// downloadAll fetches the jar artifacts of a graph in parallel (bounded),
// one per Spark file name (Spark 3.5 skips non-jar artifacts), and returns
// them as a lock records them.
func downloadAll(ctx context.Context, src *Source, refs []ArtifactRef, parallel int) ([]lock.Artifact, error) {
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
	out := make([]lock.Artifact, len(todo))
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
			out[i] = lock.Artifact{
				Coord:      coord,
				File:       SparkFileName(ref.Group, ref.Artifact, ref.Version, ref.Classifier, "jar"),
				Repository: redact.StripUserinfo(servedBy(ref, cf).URL),
				Sha256:     cf.Sha256,
				Size:       cf.Size,
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// lockedChain is the chain FetchLocked matches a lock's repositories
// against: the Ivy settings' resolvers, then the settings' server
// credentials (first: the first entry whose URL matches wins), then
// req.Repositories. offline is req.Offline or the settings' <offline>.
func lockedChain(ctx context.Context, req Config, o *options) (chain []*entry, offline bool, err error) {
	var repos []string
	for _, r := range req.Repositories {
		for _, u := range strings.Split(r, ",") {
			if u = strings.TrimSpace(u); u != "" {
				repos = append(repos, u)
			}
		}
	}
	if req.IvySettings != "" {
		if chain, err = ivyChainFor(ctx, Config{IvySettings: req.IvySettings, Repositories: repos, Home: req.Home}, o); err != nil {
			return nil, false, err
		}
	}
	creds, offline := repos, req.Offline
	if req.Settings != "" {
		s, err := settingsFor(req, o)
		if err != nil {
			return nil, false, err
		}
		base := Config{Repositories: repos, Home: req.Home, DefaultArtifactRepository: req.DefaultArtifactRepository}
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
func fetchLocked(ctx context.Context, lf *lock.File, cacheDir string, chain []*entry, offline, byContent bool, o *options) ([]string, error) {
	cacheDir = cache.Dir(cacheDir)
	if err := lf.Check(); err != nil {
		return nil, errdefs.New(errdefs.Invalid, err)
	}
	// Maven repositories serve jars: a wheel is refused, never fetched as one.
	if err := lf.JarsOnly("fetching a locked set from Maven repositories"); err != nil {
		return nil, err
	}
	jars := lf.Jars()
	paths := make([]string, len(jars))
	var missing []int
	bad := map[int]error{}
	stamps := cache.StampDir(cacheDir, true)
	for i, a := range jars {
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
	f := newFetcher(o)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.parallel)
	for _, i := range missing {
		a := jars[i]
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
	dir := ModulePath(p[0], p[1], p[2])
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
func fetchLockedOne(ctx context.Context, c *cache.Cache, f *fetcher, chain []*entry, a lock.Artifact, offline, byContent bool, bad error) error {
	var err error
	r := &entry{}
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
func lockedRelFetch(ctx context.Context, f *fetcher, r *entry, a lock.Artifact, offline bool) (string, error) {
	return lockedRelIn(r, a, func(rel string) ([]byte, error) {
		if r.isFile() {
			p, err := safepath.Join(r.dir, rel)
			if err != nil {
				return nil, errdefs.New(errdefs.Invalid, err)
			}
			return readFileMax(p, MaxMetadataSize)
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
func fetchLockedFrom(ctx context.Context, c *cache.Cache, f *fetcher, r *entry, a lock.Artifact, offline bool, bad error) error {
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
