package resolver

// Dynamic revisions (Ivy's version matchers, see version_match.go): the
// node of a dependency on "1.+", "latest.release" or "[1.0,2.0)" is the
// node of the revision it resolves to, as IvyNode.loadData moves a dynamic
// node onto its resolved revision (moveToRealNode). LatestConflictManager
// delays a conflict with a dynamic revision until it is resolved, so
// conflicts compare resolved revisions.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/revision"

	"github.com/prebake/prebake/maven"
	"github.com/prebake/prebake/resolver/repo"
)

type dynamicRevs struct {
	mu   sync.Mutex
	m    map[maven.Coord]maven.Coord
	repo map[maven.Coord]Repository // resolved revision → the repository that won
	// bad is the first version list refused as hostile (a version
	// maven.CheckPart refuses, a maven-metadata.xml over its cap): the
	// resolution fails with it (errdefs.Invalid), not with the "not found" it
	// leads to.
	bad error
	// refused is the first refusal met while picking (a 429 rate limited,
	// a 401/403 denied): the resolution fails with it, never with the
	// "not found" a revision left unresolved leads to.
	refused error
}

// maxDynamicProbes bounds the candidates one repository's list is probed
// for (a POM fetched per matching version, latest first): Ivy walks the
// whole list, and a hostile maven-metadata.xml lists 120,000 versions
// (security review 4, L1): past it the resolution fails (errdefs.Invalid).
const maxDynamicProbes = 64

// noteRefused records err if a repository refused to answer (see
// dynamicRevs.refused) and reports whether it did.
func (e *engine) noteRefused(err error) bool {
	if k := errdefs.KindOf(err); k != errdefs.RateLimited && k != errdefs.Denied {
		return false
	}
	e.dyn.mu.Lock()
	if e.dyn.refused == nil {
		e.dyn.refused = err
	}
	e.dyn.mu.Unlock()
	return true
}

// repoVersioner is the per-repository view of a Source, which Ivy's
// ChainResolver resolves a dynamic revision through: each repository picks
// its best among the versions IT lists whose POM IT has. A Source without
// it is treated as one merged repository.
type repoVersioner interface {
	// Repositories is the chain, in order.
	Repositories() []Repository
	// VersionsIn lists the versions r publishes for g:a (maven-metadata.xml,
	// else a directory listing); the error matches ErrNotFound when r
	// lists none.
	VersionsIn(ctx context.Context, r Repository, group, artifact string) ([]string, error)
	// POMIn returns the POM of g:a:v from r only.
	POMIn(ctx context.Context, r Repository, group, artifact, version string) (*POMFile, error)
}

// resolveCoord normalizes c's revision ("[1.0]" is "1.0") and resolves a
// dynamic one to a published revision. An unresolvable dynamic revision is
// returned unchanged: its node then fails to load ("unresolved dependency").
func (e *engine) resolveCoord(ctx context.Context, c maven.Coord) maven.Coord {
	c.Version = NormalizeRevision(c.Version)
	if !IsDynamicRevision(c.Version) {
		return c
	}
	e.dyn.mu.Lock()
	r, ok := e.dyn.m[c]
	e.dyn.mu.Unlock()
	if ok {
		return r
	}
	r, repo, won := e.pickRevision(ctx, c)
	e.dyn.mu.Lock()
	if prev, ok := e.dyn.m[c]; ok {
		r = prev // another goroutine resolved c first
	} else {
		if e.dyn.m == nil {
			e.dyn.m = map[maven.Coord]maven.Coord{}
			e.dyn.repo = map[maven.Coord]Repository{}
		}
		e.dyn.m[c] = r
		if _, taken := e.dyn.repo[r]; won && !taken {
			e.dyn.repo[r] = repo
		}
	}
	e.dyn.mu.Unlock()
	return r
}

// wonIn is the repository a dynamic revision resolved to c in, if any: c's
// POM and artifacts are then loaded from it (Ivy's ChainResolver returns
// the winning resolver's module revision).
func (e *engine) wonIn(c maven.Coord) (Repository, bool) {
	e.dyn.mu.Lock()
	defer e.dyn.mu.Unlock()
	r, ok := e.dyn.repo[c]
	return r, ok
}

// pickRevision is ChainResolver.getDependency over BasicResolver.findResource:
// each repository of the chain picks, among the revisions IT lists
// (IBiblioResolver.listResources: maven-metadata.xml <versions>, else the
// directory listing), the latest (latest-revision order) that the matcher
// accepts and whose POM it has (latest.<status> also parses the POM and
// checks its status); the latest across repositories wins, and a tie keeps
// the earlier repository (AbstractResolver.checkLatest keeps the previous
// module revision unless the new one is strictly later). won is false when
// the Source has no per-repository view (repoVersioner).
func (e *engine) pickRevision(ctx context.Context, c maven.Coord) (r maven.Coord, repo Repository, won bool) {
	rv, ok := e.src.(repoVersioner)
	if !ok {
		if v, ok := e.pickIn(ctx, c, e.src.Versions, pomFetcher{e}); ok {
			return maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: v}, Repository{}, false
		}
		return c, Repository{}, false
	}
	best := ""
	for _, rp := range rv.Repositories() {
		list := func(ctx context.Context, g, a string) ([]string, error) { return rv.VersionsIn(ctx, rp, g, a) }
		v, ok := e.pickIn(ctx, c, list, repoFetcher{pomFetcher{e}, rv, rp, c.Group, c.Artifact})
		if ok && (best == "" || revision.Compare(v, best) > 0) {
			best, repo = v, rp
		}
	}
	if best == "" {
		// Nothing listed or nothing matches: the node fails to load, naming
		// the repositories.
		return c, Repository{}, false
	}
	return maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: best}, repo, true
}

// pickIn is BasicResolver.findResource over the revisions list gives: the
// latest matching revision whose POM f has (and, for latest.<status>,
// whose status is accepted).
func (e *engine) pickIn(ctx context.Context, c maven.Coord, list func(ctx context.Context, g, a string) ([]string, error), f maven.Fetcher) (string, bool) {
	vs, err := list(ctx, c.Group, c.Artifact)
	if err != nil {
		if errors.Is(err, maven.ErrInvalidCoordinate) || errors.Is(err, repo.ErrTooLarge) {
			e.dyn.mu.Lock()
			if e.dyn.bad == nil {
				e.dyn.bad = err
			}
			e.dyn.mu.Unlock()
		}
		e.noteRefused(err)
		return "", false
	}
	// LatestRevisionStrategy.sort (ascending, stable), walked from the end.
	sorted := append([]string{}, vs...)
	revision.Sort(sorted)
	probes := 0
	for i := len(sorted) - 1; i >= 0; i-- {
		v := sorted[i]
		if !MatchRevision(c.Version, v) {
			continue
		}
		if probes++; probes > maxDynamicProbes {
			e.dyn.mu.Lock()
			if e.dyn.bad == nil {
				e.dyn.bad = fmt.Errorf("%s:%s:%s: the latest %d matching versions a repository lists have no usable POM; prebake probes no further (a listing of %d versions)",
					c.Group, c.Artifact, c.Version, maxDynamicProbes, len(vs))
			}
			e.dyn.mu.Unlock()
			return "", false
		}
		if _, _, err := f.FetchPOM(ctx, c.Group, c.Artifact, v); err != nil {
			if e.noteRefused(err) {
				return "", false // asking for more would be refused too
			}
			continue // unreachable
		}
		if needsStatus(c.Version) {
			l := e.loader
			if _, ok := f.(repoFetcher); ok {
				l = maven.NewLoader(f) // this repository's POM, the chain's parents
			}
			m, err := l.Load(ctx, c.Group, c.Artifact, v)
			if err != nil || !acceptStatus(c.Version, pomStatus(m.Version)) {
				continue
			}
		}
		return v, true
	}
	return "", false
}

// repoFetcher fetches g:a's POMs from one repository, and everything else
// (parents, BOMs) through the chain.
type repoFetcher struct {
	pomFetcher
	rv   repoVersioner
	repo Repository
	g, a string
}

func (f repoFetcher) FetchPOM(ctx context.Context, g, a, v string) ([]byte, string, error) {
	if g != f.g || a != f.a {
		return f.pomFetcher.FetchPOM(ctx, g, a, v)
	}
	p, err := f.rv.POMIn(ctx, f.repo, g, a, v)
	if err != nil {
		return nil, g + ":" + a + ":" + v, err
	}
	return p.Data, p.URL, nil
}

// ResolveRevision implements maven.RevisionResolver: the dynamic revision
// of a parent or an imported BOM resolves as a dependency's does (an
// unresolvable one stays as written, so its load fails "not found").
func (f pomFetcher) ResolveRevision(ctx context.Context, g, a, v string) string {
	return f.e.resolveCoord(ctx, maven.Coord{Group: g, Artifact: a, Version: v}).Version
}
