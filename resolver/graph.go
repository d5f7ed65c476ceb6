package resolver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/maven"
)

// Graph is the resolved dependency graph. The graph builder owns this type;
// callers use Roots (for the tree), Artifacts (the jars to retrieve) and
// Evicted.
type Graph struct {
	Roots     []*Node
	Artifacts []ArtifactRef
	Evicted   []Eviction
	// Modules are the resolved (non-evicted) modules, sorted, including
	// those that contribute no jar (relocation stubs, pom packaging): the
	// oracle's "module" lines.
	Modules []string
}

// Node is one module in the tree printed by `prebake resolve`.
type Node struct {
	Group, Artifact, Version string
	Children                 []*Node
	Evicted                  bool
	// By is the winning version when Evicted.
	By string `json:",omitempty"`
}

// Eviction records a module version that lost a conflict.
type Eviction struct {
	Group, Artifact, Version string
	By                       string // the winning version
}

// BuildGraph resolves req.Packages as Spark 3.5 (Ivy 2.5.1) does, reading
// POMs through src. It parses the coordinates and exclusions with Spark's
// rules, fetches the POMs of each frontier concurrently, then applies Ivy's
// order-dependent semantics deterministically. See graph_ivy.go.
func BuildGraph(ctx context.Context, req Request, src Source, log Logger) (*Graph, error) {
	return buildIvyGraph(ctx, req, src, log, false)
}

// buildIvyGraph is BuildGraph; literal turns off the lazy walks of
// graph_frames.go (Ivy's walks replayed step by step, for the tests that
// check both give the same graph).
func buildIvyGraph(ctx context.Context, req Request, src Source, log Logger, literal bool) (*Graph, error) {
	if log == nil {
		log = nopLogger{}
	}
	coords, err := ParseCoordinates(strings.Join(nonBlank(req.Packages), ","))
	if err != nil {
		return nil, err
	}
	rules, err := ParseExcludes(req.Excludes)
	if err != nil {
		return nil, err
	}
	switch req.Conflict {
	case "", ConflictLatest, ConflictNearest:
	default:
		return nil, errdefs.Errorf(errdefs.BadArgument, "conflict mode %q: must be latest or nearest", req.Conflict)
	}
	ivy, err := EffectiveIvy(req.SparkVersion, req.IvyVersion)
	if err != nil {
		return nil, err
	}
	e := newEngine(src, log, rules)
	e.literal = literal
	e.mergeByRevision = ivy == Ivy251
	e.setIvy(ivy)
	if len(coords) == 0 {
		return &Graph{}, nil
	}
	e.prefetch(ctx, coords)
	if req.Conflict == ConflictNearest {
		e.runNearest(ctx, coords)
	} else {
		e.runLatest(ctx, coords)
	}
	if e.dyn.bad != nil {
		return nil, errdefs.New(errdefs.Invalid, e.dyn.bad)
	}
	if e.dyn.refused != nil {
		return nil, e.dyn.refused
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.graph(ctx, coords)
}

func nonBlank(v []string) []string {
	var out []string
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// unresolvedError is Ivy's "unresolved dependency" problem.
func unresolvedError(c maven.Coord, err error) error {
	code := errdefs.KindOf(err)
	switch {
	case errors.Is(err, maven.ErrCycle), errors.Is(err, maven.ErrMalformed), errors.Is(err, maven.ErrCyclicProperty),
		errors.Is(err, maven.ErrInvalidCoordinate), errors.Is(err, maven.ErrExpansion), errors.Is(err, ErrConfigurationNotFound):
		code = errdefs.Invalid
	case errors.Is(err, cache.ErrNotCached):
		// Offline, a repository was not asked: a run online may find it.
		code = errdefs.Unavailable
	case errors.Is(err, ErrNotFound):
		code = errdefs.NotFound
	case code == errdefs.Internal && !errors.As(err, new(*errdefs.Error)):
		code = errdefs.Invalid
	}
	return errdefs.New(code, fmt.Errorf("unresolved dependency: %s#%s;%s: %w", c.Group, c.Artifact, c.Version, err))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
