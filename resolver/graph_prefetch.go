package resolver

import (
	"context"
	"sync"

	"github.com/prebake/prebake/maven"
)

// prefetchParallel bounds the goroutines loading POMs; the Source bounds
// per-host concurrency itself.
const prefetchParallel = 64

// prefetch loads, concurrently, the effective POM (parents and imported
// BOMs included) of every module reachable through compile/runtime,
// non-optional, non-excluded dependencies, so that the deterministic Ivy
// pass finds them in the loader's memo. The cost is one round trip per
// level of the graph (plus parent/BOM chains), not one per module. Errors
// are not reported here: the Ivy pass meets them again, in Ivy's order,
// and only for the modules Ivy really visits.
func (e *engine) prefetch(ctx context.Context, coords []Coordinate) {
	var (
		mu   sync.Mutex
		seen = map[maven.Coord]bool{}
		wg   sync.WaitGroup
		sem  = make(chan struct{}, prefetchParallel)
	)
	// ancestors carries the models above the module on the crawl path, for
	// dependencyManagement mediation (see mediate).
	var visit func(c maven.Coord, excl []maven.Exclusion, ancestors []*maven.Model)
	visit = func(c maven.Coord, excl []maven.Exclusion, ancestors []*maven.Model) {
		mu.Lock()
		if seen[c] {
			mu.Unlock()
			return
		}
		seen[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			c := e.resolveCoord(ctx, c)
			m, err := e.loader.Load(ctx, c.Group, c.Artifact, c.Version)
			<-sem
			if err != nil {
				return
			}
			if m.Relocation != nil {
				visit(*m.Relocation, excl, ancestors)
				return
			}
			below := append(append([]*maven.Model{}, ancestors...), m)
			for _, d := range m.Dependencies {
				if d.Optional || (d.Scope != "compile" && d.Scope != "runtime") {
					continue
				}
				if e.rootExcludes(d.Group, d.Artifact) || excludedBy(excl, d.Group, d.Artifact) {
					continue
				}
				target := maven.Coord{Group: d.Group, Artifact: d.Artifact, Version: d.Version}
				for _, a := range ancestors {
					if v, ok := a.ManagedVersion(d.Group, d.Artifact); ok && v != "" {
						target.Version = v
						break
					}
				}
				if d.NonTransitive {
					// still load the module itself, but not its dependencies
					visit(target, []maven.Exclusion{{Group: "*", Artifact: "*"}}, below)
					continue
				}
				visit(target, append(append([]maven.Exclusion{}, excl...), d.Exclusions...), below)
			}
		}()
	}
	for _, c := range coords {
		if e.rootExcludes(c.Group, c.Artifact) {
			continue
		}
		visit(maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: c.Version}, nil, nil)
	}
	wg.Wait()
}

func excludedBy(excl []maven.Exclusion, g, a string) bool {
	for _, x := range excl {
		if x.Matches(g, a) {
			return true
		}
	}
	return false
}
