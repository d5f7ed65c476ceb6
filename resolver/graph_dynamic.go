package resolver

// Dynamic revisions (Ivy's version matchers, see version_match.go): the
// node of a dependency on "1.+", "latest.release" or "[1.0,2.0)" is the
// node of the revision it resolves to, as IvyNode.loadData moves a dynamic
// node onto its resolved revision (moveToRealNode). LatestConflictManager
// delays a conflict with a dynamic revision until it is resolved, so
// conflicts compare resolved revisions.

import (
	"context"
	"sort"
	"sync"

	"github.com/prebake/prebake/maven"
)

type dynamicRevs struct {
	mu sync.Mutex
	m  map[maven.Coord]maven.Coord
}

// resolveCoord normalizes c's revision ("[1.0]" is "1.0") and resolves a
// dynamic one to a published revision. An unresolvable dynamic revision is
// returned unchanged: its node then fails to load ("unresolved dependency").
func (e *engine) resolveCoord(c maven.Coord) maven.Coord {
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
	r = e.pickRevision(c)
	e.dyn.mu.Lock()
	if e.dyn.m == nil {
		e.dyn.m = map[maven.Coord]maven.Coord{}
	}
	e.dyn.m[c] = r
	e.dyn.mu.Unlock()
	return r
}

// pickRevision is BasicResolver.findResource over the revisions the chain
// lists (IBiblioResolver.listResources: maven-metadata.xml <versions>, else
// the directory listing): the latest revision (latest-revision order) that
// the matcher accepts and whose POM exists; latest.<status> also parses
// the POM and checks its status.
func (e *engine) pickRevision(c maven.Coord) maven.Coord {
	vs, err := e.src.Versions(e.ctx, c.Group, c.Artifact)
	if err != nil {
		// Nothing listed: the node fails to load, naming the repositories.
		return c
	}
	// LatestRevisionStrategy.sort (ascending, stable), walked from the end.
	sorted := append([]string{}, vs...)
	sort.SliceStable(sorted, func(i, j int) bool { return CompareRevisions(sorted[i], sorted[j]) < 0 })
	for i := len(sorted) - 1; i >= 0; i-- {
		v := sorted[i]
		if !MatchRevision(c.Version, v) {
			continue
		}
		if _, _, err := (pomFetcher{e}).FetchPOM(e.ctx, c.Group, c.Artifact, v); err != nil {
			continue // unreachable
		}
		if needsStatus(c.Version) {
			m, err := e.loader.Load(e.ctx, c.Group, c.Artifact, v)
			if err != nil || !acceptStatus(c.Version, pomStatus(m.Version)) {
				continue
			}
		}
		return maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: v}
	}
	return c
}

// ResolveRevision implements maven.RevisionResolver: the dynamic revision
// of a parent or an imported BOM resolves as a dependency's does (an
// unresolvable one stays as written, so its load fails "not found").
func (f pomFetcher) ResolveRevision(_ context.Context, g, a, v string) string {
	return f.e.resolveCoord(maven.Coord{Group: g, Artifact: a, Version: v}).Version
}
