package resolver

import (
	"context"

	"github.com/prebake/prebake/maven"
)

// runNearest is the nearest conflict strategy: Maven's nearest-wins mediation (the
// shallowest occurrence of a module wins; the first declared on a tie),
// breadth-first, with path-based exclusions. Scopes, optional, relocation
// and the root exclusion rules are as in the Ivy pass.
func (e *engine) runNearest(ctx context.Context, coords []Coordinate) {
	type item struct {
		n    *inode
		excl []maven.Exclusion
		// transitive is false below a "*:*" exclusion.
		transitive bool
	}
	var queue []item
	for _, c := range coords {
		if e.rootExcludes(c.Group, c.Artifact) {
			continue
		}
		d := &dd{target: maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: c.Version},
			confs: map[string][]string{"default": {"default"}}, transitive: true}
		n := e.node(ctx, d.target)
		n.callers = append(n.callers, caller{dd: d})
		queue = append(queue, item{n: n, transitive: true})
	}
	for len(queue) > 0 && e.err == nil {
		it := queue[0]
		queue = queue[1:]
		n := it.n
		if w := e.selected[n.mid()]; w != nil && w != n {
			n.evicted = true
			continue
		} else if w == n {
			continue
		}
		e.selected[n.mid()] = n
		e.load(ctx, n)
		// The selected node is fetched in its real configuration: its own
		// artifacts are retrieved (artifactsOf).
		n.addConfs("default")
		if n.loadErr != nil || n.noPOM || !it.transitive {
			continue
		}
		for _, d := range n.dds {
			if len(d.confs["compile"]) == 0 && len(d.confs["runtime"]) == 0 && len(d.confs["default"]) == 0 {
				continue
			}
			if e.rootExcludes(d.target.Group, d.target.Artifact) || excludedBy(it.excl, d.target.Group, d.target.Artifact) {
				continue
			}
			child := e.node(ctx, d.target)
			child.callers = append(child.callers, caller{parent: n, dd: d})
			queue = append(queue, item{n: child, excl: append(append([]maven.Exclusion{}, it.excl...), d.excl...), transitive: d.transitive})
		}
	}
}
