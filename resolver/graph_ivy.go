package resolver

// The deterministic part of BuildGraph: Ivy 2.5.1's ResolveEngine
// (fetchDependencies / doFetchDependencies, per-ancestor resolveConflict /
// computeConflicts, LatestConflictManager with latest-revision where every
// POM dependency is "force" so the version an ancestor declares itself wins
// there, caller-based exclusions, transitive eviction) replayed on POMs that
// prefetch has already loaded concurrently.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/prebake/prebake/internal/revision"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/maven"
	"github.com/prebake/prebake/resolver/repo"
)

// Ivy's Maven 2 configurations that matter for conf "default".
var confExtends = map[string][]string{
	"default": {"runtime", "master"},
	"runtime": {"compile"},
	"test":    {"runtime"},
}

// depArt is a dependency artifact (a <dependency> with a classifier or a
// non-jar type).
type depArt struct{ classifier, typ, ext string }

// dd is an Ivy dependency descriptor.
type dd struct {
	target     maven.Coord
	confs      map[string][]string // caller conf → dependency confs
	excl       []maven.Exclusion
	transitive bool
	arts       map[string][]depArt // caller conf → dependency artifacts
}

type caller struct {
	parent *inode // nil: the root module
	dd     *dd
}

type inode struct {
	id      maven.Coord
	model   *maven.Model
	pom     *POMFile
	noPOM   bool // resolved without a POM (Ivy's allownomd)
	loadErr error
	// confProblem: a configuration the default descriptor of a module
	// without POM lacks (see handleDefaultDescriptorConf).
	confProblem error
	loaded      bool
	dds         []*dd
	callers     []caller
	evicted     bool
	fetched     map[string]bool
	order       int
	// evMarked/evictedBy: Ivy's eviction data (root conf default); see
	// engine.isEvicted.
	evMarked  bool
	evictedBy []*inode
	// declaredBy: the nodes whose descriptor declares a dependency on this
	// node (IvyNode.getDependencyDescriptor(parent) != nil).
	declaredBy map[*inode]bool
	// Ivy's configuration bookkeeping, see graph_confs.go: confsToFetch
	// (in insertion order), fetchedConfigurations, the root conf loaded,
	// the usage's configurations and the usages merged from evicted nodes.
	toFetch      []string
	fetchedConfs map[string]bool
	rootLoaded   bool
	confs        map[string]bool
	mergedConfs  map[string]bool
	// midS caches mid() (it keys every per-ancestor table lookup).
	midS string
	// settled: the last resolveConflict walk from an ancestor upwards
	// that found n resolved at every level (see settledWalk).
	settled settledWalk
	// lazy: n is the one node of its module, whose walks are recorded
	// (records: their top frames; walked: ancestors known to have
	// selected n) instead of written to the tables (graph_frames.go).
	lazy    bool
	records []*frame
	walked  map[*inode]bool
	eng     *engine
	// gen counts the events that may make n's depsOf do something new;
	// memo is the state of its last depsOf (graph_frames.go).
	gen  uint64
	memo depsMemo
}

// settledWalk identifies a resolveConflict walk of a node from ancestor i
// of a visit path (by the frame of that ancestor: the path up to it, see
// graph_frames.go) while its module's conflict tables were at generation
// gen. Such a
// walk that met only ancestors where the node is resolved (or evicted)
// changes nothing but markEvicted (idempotent), so it is not repeated
// until the tables of that module change: without this, every fetch of a
// node walked all its ancestors again (quadratic work per level in deep
// chains).
type settledWalk struct {
	at  *frame
	gen uint64
}

// visitKey is Ivy's VisitNode: a node reached from a parent (e.root for
// the coordinates).
type visitKey struct{ parent, child *inode }

func (n *inode) mid() string {
	if n.midS == "" {
		n.midS = n.id.Group + ":" + n.id.Artifact
	}
	return n.midS
}

type engine struct {
	src   Source
	log   Logger
	rules []ExcludeRule
	// mergeByRevision: the Ivy of Request.SparkVersion is older than 2.5.2
	// (see ddsOf).
	mergeByRevision bool
	loader          *maven.Loader
	poms            sync.Map // maven.Coord → *POMFile

	nodes    map[maven.Coord]*inode
	selected map[string]*inode
	// everRootSelected: module ids for which a node reached only from the
	// root was selected at some point.
	rootDDs []*dd
	root    *inode
	err     error
	seq     int
	// usage: VisitNode.gotoNode redirects a visit node's IvyNodeUsage to
	// the usage of the node it replaced in a conflict; the handleConfiguration
	// calls made through that visit node then fill the other node's usage.
	usage map[visitKey]*inode
	// sel, evd: each ancestor's resolved and evicted nodes per module
	// (IvyNode.getResolvedNodes / getEvictedNodes).
	sel, evd map[ancMid][]*inode
	// dyn: dynamic revisions resolved (see graph_dynamic.go).
	dyn dynamicRevs
	// excls: every exclusion any caller's descriptor holds (see
	// excludedBelow); med: the mediation index of the last deep path.
	excls map[maven.Exclusion]bool
	// midGen counts the changes to sel/evd per module (see settledWalk).
	midGen map[string]uint64
	// fs: the visit path's frames (graph_frames.go); firstOf: the first
	// node of each module.
	fs      frameStack
	firstOf map[string]*inode
	pathBuf []*inode
	literal bool // no lazy walks (tests)
}

type pomFetcher struct{ e *engine }

func (f pomFetcher) FetchPOM(ctx context.Context, g, a, v string) ([]byte, string, error) {
	var p *POMFile
	var err error
	if r, ok := f.e.wonIn(maven.Coord{Group: g, Artifact: a, Version: v}); ok {
		p, err = f.e.src.(repoVersioner).POMIn(ctx, r, g, a, v)
	} else {
		p, err = f.e.src.POM(ctx, g, a, v)
	}
	if err != nil {
		return nil, g + ":" + a + ":" + v, err
	}
	f.e.poms.Store(maven.Coord{Group: g, Artifact: a, Version: v}, p)
	return p.Data, p.URL, nil
}

func newEngine(src Source, log Logger, rules []ExcludeRule) *engine {
	e := &engine{src: src, log: log, rules: rules,
		nodes: map[maven.Coord]*inode{}, selected: map[string]*inode{},
		usage: map[visitKey]*inode{}, sel: map[ancMid][]*inode{}, evd: map[ancMid][]*inode{},
		midGen: map[string]uint64{}, firstOf: map[string]*inode{}}
	e.loader = maven.NewLoader(pomFetcher{e})
	e.root = &inode{fetched: map[string]bool{}, loaded: true, eng: e}
	return e
}

// setIvy makes the engine follow Ivy version ivy (EffectiveIvy's answer):
// 2.6.0 reads dependencyManagement by type and classifier (IVY-1654).
func (e *engine) setIvy(ivy string) {
	e.loader.ManagedByKind = ivy == Ivy260
}

func (e *engine) rootExcludes(group, artifact string) bool {
	for _, r := range e.rules {
		if r.Matches(group, artifact) {
			return true
		}
	}
	return false
}

// ddsOf converts a model into Ivy dependency descriptors
// (PomModuleDescriptorBuilder's conf mappings). mergeByRevision is Ivy
// before 2.5.2 (IVY-1642): dependencies on the same g:a:v share the first
// one's descriptor, so one that differs only by classifier adds its
// artifact to it, and a plain one is lost beside a classified one.
func ddsOf(m *maven.Model, mergeByRevision bool) []*dd {
	if m.Relocation != nil {
		c := map[string][]string{}
		for _, conf := range []string{"default", "master", "compile", "provided", "runtime", "system", "sources", "javadoc", "optional"} {
			c[conf] = []string{conf}
		}
		return []*dd{{target: *m.Relocation, confs: c, transitive: true}}
	}
	var out []*dd
	for _, d := range m.Dependencies {
		x := &dd{target: maven.Coord{Group: d.Group, Artifact: d.Artifact, Version: d.Version},
			excl: d.Exclusions, transitive: !d.NonTransitive, confs: map[string][]string{}}
		scope := d.Scope
		switch {
		case d.Optional:
			scope = "optional"
			x.confs["optional"] = []string{"compile(*)", "master(*)"}
		case scope == "compile":
			x.confs["compile"] = []string{"compile(*)", "master(*)"}
			x.confs["runtime"] = []string{"runtime(*)"}
		case scope == "runtime":
			x.confs["runtime"] = []string{"compile(*)", "runtime(*)", "master(*)"}
		case scope == "provided":
			x.confs["provided"] = []string{"compile(*)", "provided(*)", "runtime(*)", "master(*)"}
		case scope == "test":
			x.confs["test"] = []string{"runtime(*)", "master(*)"}
		case scope == "system":
			x.confs["system"] = []string{"master(*)"}
		}
		if d.Classifier != "" || (d.Type != "" && d.Type != "jar") {
			typ := d.Type
			if typ == "" {
				typ = "jar"
			}
			ext, cls := typ, d.Classifier
			switch {
			case typ == "test-jar":
				ext = "jar"
				if cls == "" {
					cls = "tests"
				}
			case repo.JarPackaging(typ):
				ext = "jar"
			}
			x.arts = map[string][]depArt{scope: {{classifier: cls, typ: typ, ext: ext}}}
		}
		if mergeByRevision {
			if first := sameRevision(out, x.target); first != nil {
				first.merge(x)
				continue
			}
		}
		out = append(out, x)
	}
	return out
}

// sameRevision is the descriptor of dds whose target is c, or nil.
func sameRevision(dds []*dd, c maven.Coord) *dd {
	for _, d := range dds {
		if d.target == c {
			return d
		}
	}
	return nil
}

// merge adds x's configurations, artifacts and exclusions to d, as Ivy
// 2.5.1's PomModuleDescriptorBuilder.addDependency does to the descriptor
// it already holds for the same revision.
func (d *dd) merge(x *dd) {
	for conf, to := range x.confs {
		for _, t := range to {
			if !slices.Contains(d.confs[conf], t) {
				d.confs[conf] = append(d.confs[conf], t)
			}
		}
	}
	for conf, arts := range x.arts {
		if d.arts == nil {
			d.arts = map[string][]depArt{}
		}
		for _, a := range arts {
			if !slices.Contains(d.arts[conf], a) {
				d.arts[conf] = append(d.arts[conf], a)
			}
		}
	}
	d.excl = append(d.excl, x.excl...)
}

func (e *engine) node(ctx context.Context, c maven.Coord) *inode {
	c = e.resolveCoord(ctx, c)
	n, ok := e.nodes[c]
	if !ok {
		e.seq++
		n = &inode{id: c, fetched: map[string]bool{}, order: e.seq, eng: e}
		e.nodes[c] = n
		if first := e.firstOf[n.mid()]; first == nil {
			e.firstOf[n.mid()] = n
			n.lazy = !e.literal
		} else {
			e.materialize(first)
		}
	}
	return n
}

// load reads the node's descriptor (from the prefetched loader).
func (e *engine) load(ctx context.Context, n *inode) {
	if n.loaded {
		return
	}
	n.loaded = true
	m, err := e.loader.Load(ctx, n.id.Group, n.id.Artifact, n.id.Version)
	if err != nil {
		_, hadPOM := e.poms.Load(n.id)
		if !hadPOM && errors.Is(err, ErrNotFound) && e.noPOMFallback(ctx, n) {
			n.noPOM = true
			return
		}
		n.loadErr = err
		if e.err == nil {
			e.err = unresolvedError(n.id, err)
		}
		return
	}
	n.model = m
	if p, ok := e.poms.Load(n.id); ok {
		n.pom = p.(*POMFile)
	}
	n.dds = ddsOf(m, e.mergeByRevision)
}

// isCircular: the node's module already appears on the visit path (the
// frame stack) as another node.
func (e *engine) isCircular(n *inode) bool {
	return e.fs.midCount[n.mid()] > len(e.fs.onStack[n])
}

// ancMid keys Ivy's per-ancestor conflict tables (IvyNode.selectedDeps /
// evictedDeps for one module in root conf "default").
type ancMid struct {
	anc *inode
	mid string
}

// isEvicted is IvyNodeEviction.isEvicted: the node has eviction data (some
// ancestor's conflict resolution evicted it) and the root's resolved nodes
// for its module do not include it.
func (e *engine) isEvicted(n *inode) bool {
	return n.evMarked && !hasVersion(e.sel[ancMid{e.root, n.mid()}], n)
}

func hasVersion(set []*inode, n *inode) bool {
	for _, x := range set {
		if x.id == n.id {
			return true
		}
	}
	return false
}

func without(set, drop []*inode) ([]*inode, bool) {
	var out []*inode
	removed := false
	for _, x := range set {
		if hasVersion(drop, x) {
			removed = true
			continue
		}
		out = append(out, x)
	}
	return out, removed
}

func union(a, b []*inode) []*inode {
	out := append([]*inode{}, a...)
	for _, x := range b {
		if !hasVersion(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func sameSet(a, b []*inode) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !hasVersion(b, x) {
			return false
		}
	}
	return true
}

// markEvicted is IvyNode.markEvicted: eviction data for root conf default.
func (n *inode) markEvicted(by []*inode) {
	n.evMarked = true
	n.evictedBy = append([]*inode{}, by...)
	for _, s := range by {
		if s != n {
			s.updateDataFrom(n)
		}
	}
}

// resolveConflict is ResolveEngine.resolveConflict(node, ancestor, conf,
// toevict) for the visit of n along path (path[0] is the root, the last
// element n's parent), at ancestor path[i] and then upwards. Every
// ancestor keeps its own resolved and evicted nodes per module; a
// LatestConflictManager picks among the candidates known at that ancestor
// at that time (computeConflicts), and a POM dependency is "force": the
// version an ancestor declares itself wins there.
func (e *engine) resolveConflict(ctx context.Context, n *inode, path []*inode, i int, toevict []*inode) bool {
	if i < 0 {
		return true
	}
	anc := path[i]
	key := ancMid{anc, n.mid()}
	if hasVersion(e.evd[key], n) {
		return true
	}
	if hasVersion(e.sel[key], n) {
		// The walk above this ancestor only reads the tables of n's module
		// when nothing changed them since the same walk settled (see
		// settledWalk); its markEvicted calls are repeated below.
		if s := (settledWalk{e.frameAt(path, i), e.midGen[key.mid]}); s.at == nil || n.settled != s {
			if !e.resolveConflict(ctx, n, path, i-1, toevict) {
				return false
			}
			if s.at != nil && s.gen == e.midGen[key.mid] {
				n.settled = s
			}
		}
		// getEvictionDataInRoot: previously evicted in the root.
		if rootSel := e.sel[ancMid{e.root, n.mid()}]; !hasVersion(rootSel, n) {
			n.markEvicted(rootSel)
		}
		return true
	}
	resolvedNodes := append([]*inode{}, e.sel[key]...)
	conflicts, resolvedNodes := e.computeConflicts(ctx, n, path, i, toevict, resolvedNodes)
	resolved := e.resolveConflicts(n, path, i, conflicts)
	if hasVersion(resolved, n) {
		te, _ := without(resolvedNodes, resolved)
		for _, x := range te {
			x.markEvicted(resolved)
		}
		e.sel[key] = resolved
		ev, _ := without(e.evd[key], resolved)
		if ev = union(ev, te); len(ev) > 0 {
			e.evd[key] = ev
		} else {
			delete(e.evd, key) // no empty entries: one per ancestor and module made deep chains quadratic in memory
		}
		e.midGen[key.mid]++
		return e.resolveConflict(ctx, n, path, i-1, te)
	}
	toevict, _ = without(toevict, resolved)
	ev, _ := without(e.evd[key], resolved)
	e.evd[key] = union(union(ev, toevict), []*inode{n})
	e.midGen[key.mid]++
	n.markEvicted(resolved)
	prev := e.sel[key]
	solved := true
	if !sameSet(prev, resolved) {
		e.sel[key] = resolved
		e.midGen[key.mid]++
		for _, s := range resolved {
			if !hasVersion(prev, s) {
				// node.gotoNode(sel): the selected node's visit from the
				// same parent takes n's usage.
				e.gotoNode(path[len(path)-1], n, s)
				solved = e.resolveConflict(ctx, s, path, i-1, toevict) && solved
			}
		}
	}
	return solved
}

// computeConflicts is ResolveEngine.computeConflicts.
func (e *engine) computeConflicts(ctx context.Context, n *inode, path []*inode, i int, toevict, selected []*inode) (conflicts, sel []*inode) {
	conflicts = []*inode{n}
	anc, parent := path[i], path[len(path)-1]
	sel, removed := without(selected, toevict)
	add := func(c *inode) {
		if !hasVersion(conflicts, c) {
			conflicts = append(conflicts, c)
		}
	}
	switch {
	case removed || (len(sel) == 0 && parent != anc):
		for _, c := range e.depsOf(ctx, anc, path[:i]) {
			if c.mid() == n.mid() {
				add(c)
			}
			for _, r := range e.sel[ancMid{c, n.mid()}] {
				add(r)
			}
		}
	case len(sel) == 0:
		for _, c := range e.depsOf(ctx, parent, path[:len(path)-1]) {
			if c.mid() == n.mid() {
				add(c)
			}
		}
	default:
		for _, r := range sel {
			add(r)
		}
	}
	return conflicts, sel
}

// depsOf is IvyNode.getDependencies of x in the configurations used so far
// (default/runtime/compile/master), after exclusions and mediation by the
// dependers above x. Each dependency's node records that x declares it
// (IvyNode.getDependencyDescriptor(parent), used by the force rule).
func (e *engine) depsOf(ctx context.Context, x *inode, above []*inode) []*inode {
	out, _ := e.getDependencies(ctx, x, above, false)
	return out
}

// depsOfIsNoop: depsOf(x, above) would change nothing now (no node to
// create, no configuration to fetch to add, no declaration to record).
func (e *engine) depsOfIsNoop(ctx context.Context, x *inode, above []*inode) bool {
	_, changes := e.getDependencies(ctx, x, above, true)
	return !changes
}

// getDependencies is depsOf; with dry it changes nothing and only reports
// whether it would.
func (e *engine) getDependencies(ctx context.Context, x *inode, above []*inode, dry bool) (out []*inode, changes bool) {
	var dds []*dd
	if x == e.root {
		dds = e.rootDDs
	} else {
		dds = x.dds
	}
	seen := map[*inode]bool{}
	for _, conf := range x.usageConfs() {
		for _, d := range dds {
			dconfs := d.confs[conf]
			if len(dconfs) == 0 {
				continue
			}
			if e.excludedBelow(x, d.target.Group, d.target.Artifact) {
				continue
			}
			if x != e.root {
				d = e.mediateBelow(d, above, x)
			}
			if dry {
				c := e.existingNode(d.target)
				if c == nil || (x != e.root && !c.declaredBy[x]) {
					return nil, true
				}
				for _, conf := range dconfs {
					if !c.fetchedConfs[conf] && !hasString(c.toFetch, conf) {
						return nil, true
					}
				}
				continue
			}
			c := e.node(ctx, d.target)
			c.updateConfsToFetch(javaOrder(dconfs))
			if c.declaredBy == nil {
				c.declaredBy = map[*inode]bool{}
			}
			if x != e.root {
				c.declaredBy[x] = true
			}
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, false
}

// existingNode is the node of c if it exists (a dynamic revision not
// resolved yet has none).
func (e *engine) existingNode(c maven.Coord) *inode {
	c.Version = NormalizeRevision(c.Version)
	if IsDynamicRevision(c.Version) {
		e.dyn.mu.Lock()
		r, ok := e.dyn.m[c]
		e.dyn.mu.Unlock()
		if !ok {
			return nil
		}
		c = r
	}
	return e.nodes[c]
}

// resolveConflicts is ResolveEngine.resolveConflicts: the IVY-465 shortcut
// (nothing new above the direct parent), else the conflict manager.
func (e *engine) resolveConflicts(n *inode, path []*inode, i int, conflicts []*inode) []*inode {
	parent := path[len(path)-1]
	if parent != path[i] && sameSet(e.sel[ancMid{parent, n.mid()}], conflicts) {
		return conflicts
	}
	return e.latestCM(path[i], conflicts)
}

// latestCM is LatestConflictManager(latest-revision).resolveConflicts:
// a dependency the parent declares in its POM is force and wins; then the
// latest revision among the nodes not completely evicted.
func (e *engine) latestCM(parent *inode, conflicts []*inode) []*inode {
	if len(conflicts) < 2 {
		return conflicts
	}
	if parent != e.root {
		for _, c := range conflicts {
			if c.declaredBy[parent] {
				return []*inode{c}
			}
		}
	}
	var live []*inode
	for _, c := range conflicts {
		if !e.isEvicted(c) {
			live = append(live, c)
		}
	}
	if len(live) > 0 {
		conflicts = live
	}
	w := conflicts[0]
	for _, c := range conflicts[1:] {
		if revision.Compare(c.id.Version, w.id.Version) > 0 {
			w = c
		}
	}
	return []*inode{w}
}

// usageOwner is the node whose main IvyNodeUsage the visit of child from
// parent records into (VisitNode.getUsage).
func (e *engine) usageOwner(parent, child *inode) *inode {
	if o := e.usage[visitKey{parent, child}]; o != nil {
		return o
	}
	return child
}

// gotoNode is VisitNode.gotoNode(selected) called on the visit of loser
// from parent: the selected node's visit node from the same parent takes
// the loser's usage.
func (e *engine) gotoNode(parent, loser, selected *inode) {
	e.usage[visitKey{parent, selected}] = e.usageOwner(parent, loser)
}

// fetch is Ivy's fetchDependencies(node, conf) for the visit of n from
// the last node of path, fetched itself in pconf (VisitNode.parentConf).
func (e *engine) fetch(ctx context.Context, n *inode, conf, pconf string, path []*inode) {
	if e.err != nil {
		return
	}
	if err := ctx.Err(); err != nil {
		// Cancelled (SIGTERM): stop the walk, even over a warm cache.
		e.err = errdefs.New(errdefs.Timeout, fmt.Errorf("interrupted while resolving %s: %w", n.id, err))
		return
	}
	var parent *inode
	if len(path) > 0 {
		parent = path[len(path)-1]
	}
	e.conflict(ctx, n, path)
	if e.loadData(ctx, n, conf, parent, pconf) {
		// resolve again now that the descriptor is loaded
		e.conflict(ctx, n, path)
	}
	if n.loadErr != nil {
		if e.err == nil {
			e.err = unresolvedError(n.id, n.loadErr)
		}
		return
	}
	if n.loaded && !e.isEvicted(n) && !n.noPOM && !e.isCircular(n) {
		e.doFetch(ctx, n, realConf(conf), pconf, path)
	}
	if e.isEvicted(n) {
		// The winner is fetched in the configuration asked of the loser:
		// through loser.gotoNode(winner) when it is loaded already, else
		// its confs to fetch are updated and it is fetched on its own visit.
		for _, w := range n.evictedBy {
			if w == n {
				continue
			}
			if !w.loaded {
				w.updateConfsToFetch([]string{conf})
				continue
			}
			e.gotoNode(parent, n, w)
			e.fetch(ctx, w, conf, pconf, path)
		}
	}
}

func (e *engine) doFetch(ctx context.Context, n *inode, conf, pconf string, path []*inode) {
	if exts := confExtends[conf]; len(exts) > 0 {
		n.updateConfsToFetch(exts)
		for _, ext := range exts {
			e.fetch(ctx, n, ext, pconf, path)
			if e.err != nil {
				return
			}
		}
	}
	if n.fetched[conf] || !e.transitiveVia(n, path) {
		return
	}
	n.fetched[conf] = true
	type visit struct {
		child *inode
		confs []string
	}
	var visits []visit
	for _, d := range n.dds {
		cconfs := d.confs[conf]
		if len(cconfs) == 0 {
			continue
		}
		if e.excludedBelow(n, d.target.Group, d.target.Artifact) {
			continue
		}
		d = e.mediateBelow(d, path, nil)
		child := e.node(ctx, d.target)
		e.addCaller(child, caller{parent: n, dd: d})
		e.noteExclusions(d)
		if child.declaredBy == nil {
			child.declaredBy = map[*inode]bool{}
		}
		child.declaredBy[n] = true
		rcs := javaOrder(cconfs)
		child.updateConfsToFetch(rcs)
		visits = append(visits, visit{child, rcs})
	}
	// The visit paths are views of one buffer (the frame stack's nodes):
	// a path is never read after its frame is popped.
	e.pathBuf = append(e.pathBuf[:len(path)], n)
	sub := e.pathBuf[:len(path)+1]
	e.pushFrame(n)
	defer e.popFrame()
	for _, v := range visits {
		e.visitDep(ctx, v.child, v.confs, conf, sub)
		if e.err != nil {
			return
		}
	}
}

// visitDep fetches a dependency in the configurations its caller requires,
// then in the ones still pending (IvyNode.getConfsToFetch), e.g. runtime
// added by a conflict computation at an ancestor or by an eviction.
func (e *engine) visitDep(ctx context.Context, child *inode, confs []string, pconf string, path []*inode) {
	defer func() {
		if child.confProblem != nil && e.err == nil {
			e.err = unresolvedError(child.id, child.confProblem)
		}
	}()
	for _, rc := range confs {
		e.fetch(ctx, child, rc, pconf, path)
		if e.err != nil {
			return
		}
	}
	if e.isEvicted(child) || child.loadErr != nil || child.confProblem != nil {
		return
	}
	for _, fc := range javaOrder(child.toFetch) {
		e.fetch(ctx, child, fc, pconf, path)
		if e.err != nil {
			return
		}
	}
}

// mediate applies the dependencyManagement of the dependers (Ivy's
// OverrideDependencyDescriptorMediator, one per managed entry), going up
// the visit path: the topmost manager wins.
func mediate(d *dd, path []*inode) *dd {
	for _, a := range path {
		if a == nil || a.model == nil {
			continue
		}
		if v, ok := a.model.ManagedVersion(d.target.Group, d.target.Artifact); ok && v != "" {
			if v == d.target.Version {
				return d
			}
			c := *d
			c.target.Version = v
			return &c
		}
	}
	return d
}

// transitiveVia: the dependency descriptor that led to n on this path is
// transitive (a "*:*" exclusion makes it not).
func (e *engine) transitiveVia(n *inode, path []*inode) bool {
	if len(path) == 0 {
		return true
	}
	parent := path[len(path)-1]
	for _, c := range n.callers {
		if c.parent == parent || (c.parent == nil && parent == e.root) {
			return c.dd.transitive
		}
	}
	return true
}

// excludedBelow is Ivy's isDependencyModuleExcluded for a dependency of n:
// excluded when every caller path of n excludes it (dd exclusions on the
// way, or the root module's rules).
func (e *engine) excludedBelow(n *inode, g, a string) bool {
	if e.rootExcludes(g, a) {
		return true
	}
	if n == e.root || !e.anyExcludes(g, a) {
		return false
	}
	r := e.callersExclude(n, g, a, map[*inode]bool{})
	return r != nil && *r
}

func (e *engine) callersExclude(n *inode, g, a string, stack map[*inode]bool) *bool {
	t, f := true, false
	if len(n.callers) == 0 {
		return &f
	}
	stack[n] = true
	defer delete(stack, n)
	allInconclusive := true
	// A caller recorded again (one per visit) gives the same answer: the
	// stack is the same within this loop.
	var asked map[*inode]bool
	for _, c := range n.callers {
		var ex *bool
		switch {
		case ddExcludes(c.dd, g, a):
			ex = &t
		case c.parent == nil:
			ex = &f
		case stack[c.parent]:
			ex = nil
		case asked[c.parent]:
			continue
		default:
			if asked == nil {
				asked = map[*inode]bool{}
			}
			asked[c.parent] = true
			ex = e.callersExclude(c.parent, g, a, stack)
		}
		if ex != nil {
			if !*ex {
				return &f
			}
			allInconclusive = false
		}
	}
	if allInconclusive {
		return &f
	}
	return &t
}

func ddExcludes(d *dd, g, a string) bool {
	for _, x := range d.excl {
		if x.Matches(g, a) {
			return true
		}
	}
	return false
}

func (e *engine) runLatest(ctx context.Context, coords []Coordinate) {
	e.root.fetched["default"] = true
	e.root.addConfs("default")
	e.pushFrame(e.root)
	defer e.popFrame()
	e.pathBuf = append(e.pathBuf[:0], e.root)
	rootPath := e.pathBuf[:1]
	var visits []*inode
	for _, c := range coords {
		d := &dd{target: maven.Coord{Group: c.Group, Artifact: c.Artifact, Version: c.Version},
			confs: map[string][]string{"default": {"default(runtime)"}}, transitive: true}
		e.rootDDs = append(e.rootDDs, d)
		if e.rootExcludes(c.Group, c.Artifact) {
			continue
		}
		child := e.node(ctx, d.target)
		e.addCaller(child, caller{parent: nil, dd: d})
		child.updateConfsToFetch(d.confs["default"])
		visits = append(visits, child)
	}
	for _, child := range visits {
		e.visitDep(ctx, child, []string{"default(runtime)"}, "default", rootPath)
		if e.err != nil {
			return
		}
	}
	// The final state: evicted per the root's resolved nodes; the winner
	// of a module is the root's (first) resolved node.
	for _, n := range e.nodes {
		n.evicted = e.isEvicted(n)
		if rs := e.sel[ancMid{e.root, n.mid()}]; len(rs) > 0 {
			e.selected[n.mid()] = rs[0]
		}
	}
}

// survivors applies Ivy's transitive eviction: a node all of whose callers
// are evicted is evicted too. The result is in visit order.
func (e *engine) survivors() []*inode {
	alive := map[*inode]bool{}
	children := map[*inode][]*inode{}
	var roots []*inode
	for _, n := range e.nodes {
		for _, c := range n.callers {
			if c.parent == nil {
				roots = append(roots, n)
			} else {
				children[c.parent] = append(children[c.parent], n)
			}
		}
	}
	queue := []*inode{}
	for _, n := range roots {
		if !n.evicted && n.loaded && !alive[n] {
			alive[n] = true
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, c := range children[n] {
			if !c.evicted && c.loaded && !alive[c] {
				alive[c] = true
				queue = append(queue, c)
			}
		}
	}
	var out []*inode
	for n := range alive {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

func (e *engine) noPOMFallback(ctx context.Context, n *inode) bool {
	arts, _ := e.requestedArts(n)
	if len(arts) == 0 {
		arts = []depArt{{typ: "jar", ext: "jar"}}
	}
	for _, r := range e.repositories() {
		for _, a := range arts {
			if _, err := e.src.Artifact(ctx, ArtifactRef{Group: n.id.Group, Artifact: n.id.Artifact, Version: n.id.Version,
				Classifier: a.classifier, Ext: a.ext, Repo: r}); err == nil {
				n.pom = &POMFile{Repo: r}
				return true
			}
		}
	}
	return false
}

// repositories lists the chain when the Source can tell it.
func (e *engine) repositories() []Repository {
	if rs, ok := e.src.(interface{ Repositories() []Repository }); ok {
		return rs.Repositories()
	}
	return nil
}

// requestedArts is the union of the dependency artifacts the callers ask
// for. allToo reports a caller that asks for none: IvyNodeUsage's
// getDependencyIncludesSet then adds an "include all artifacts" rule, so
// the descriptor's artifacts are selected as well.
func (e *engine) requestedArts(n *inode) (out []depArt, allToo bool) {
	seen := map[depArt]bool{}
	for _, c := range n.callers {
		own := false
		for _, conf := range sortedKeys(c.dd.arts) {
			if conf != "compile" && conf != "runtime" {
				continue
			}
			for _, a := range c.dd.arts[conf] {
				own = true
				if !seen[a] {
					seen[a] = true
					out = append(out, a)
				}
			}
		}
		if !own {
			allToo = true
		}
	}
	return out, allToo
}

// artifactsOf lists the artifacts Ivy retrieves for a resolved node.
func (e *engine) artifactsOf(ctx context.Context, n *inode) ([]depArt, error) {
	if n.model != nil && (n.model.Relocation != nil || n.model.VersionRelocated) {
		return nil, nil
	}
	arts, allToo := e.requestedArts(n)
	if len(arts) > 0 && (!allToo || n.noPOM) {
		return arts, nil
	}
	if !n.selectsOwnArtifacts() {
		return arts, nil
	}
	if n.noPOM {
		return append(arts, depArt{typ: "jar", ext: "jar"}), nil
	}
	main, err := e.mainArtifacts(ctx, n)
	return append(arts, main...), err
}

// selectsOwnArtifacts is the configuration test of IvyNode.getArtifacts
// (ivy 2.5.1 src/java/org/apache/ivy/core/resolve/IvyNode.java): the
// configurations of the node's own usage and of the usages merged from the
// nodes it evicted (getConfigurations: usage plus mergedUsages) include the
// one holding the descriptor's artifacts, "master" in a POM's descriptor
// (PomModuleDescriptorBuilder) and "default" in the default descriptor of
// a module without one (DefaultModuleDescriptor.newDefaultInstance).
//
// The own usage can lack it: with --packages
// org.slf4j:slf4j-api:1.7.36,org.slf4j:slf4j-api:2.0.7 the real confs of
// 2.0.7 go to the usage of 1.7.36 (gotoNode) and the copy merged when
// 1.7.36 was evicted was taken before, so no jar. A later markEvicted of
// the loser (ResolveEngine.resolveConflict's "previously evicted in root"
// branch, reached when another module declares the loser) refreshes the
// merged copy (IvyNode.updateDataFrom → mergedUsage.updateDataFrom), and
// the jar is selected: issue 19's jackson-annotations 2.x, 2.14.0 plus
// jackson-databind 2.x (which declares 2.x), golden
// deb-twice-then-declared-transitively.
func (n *inode) selectsOwnArtifacts() bool {
	c := "master"
	if n.noPOM {
		c = "default"
	}
	return n.confs[c] || n.mergedConfs[c]
}

// mainArtifacts are the descriptor's own artifacts (conf master).
func (e *engine) mainArtifacts(ctx context.Context, n *inode) ([]depArt, error) {
	p := n.model.Packaging
	switch {
	case p == "pom":
		ref := ArtifactRef{Group: n.id.Group, Artifact: n.id.Artifact, Version: n.id.Version, Ext: "jar"}
		for _, r := range e.repositories() {
			ref.Repo = r
			if _, err := e.src.Artifact(ctx, ref); err == nil {
				return []depArt{{typ: "jar", ext: "jar"}}, nil
			}
		}
		return nil, nil
	case repo.JarPackaging(p):
		return []depArt{{typ: p, ext: "jar"}}, nil
	case p == "pear":
		return []depArt{{typ: p, ext: "phar"}}, nil
	}
	return []depArt{{typ: p, ext: p}}, nil
}

func (e *engine) graph(ctx context.Context, coords []Coordinate) (*Graph, error) {
	g := &Graph{}
	alive := e.survivors()
	aliveSet := map[*inode]bool{}
	for _, n := range alive {
		aliveSet[n] = true
		g.Modules = append(g.Modules, n.id.String())
		arts, err := e.artifactsOf(ctx, n)
		if err != nil {
			return nil, err
		}
		var repo Repository
		if n.pom != nil {
			repo = n.pom.Repo
		}
		for _, a := range arts {
			if a.ext != "jar" {
				e.log.Printf("Skipping non-jar dependency %s:%s:%s (%s)", n.id.Group, n.id.Artifact, n.id.Version, a.ext)
				continue
			}
			g.Artifacts = append(g.Artifacts, ArtifactRef{Group: n.id.Group, Artifact: n.id.Artifact, Version: n.id.Version,
				Classifier: a.classifier, Ext: a.ext, Repo: repo})
		}
	}
	sort.Strings(g.Modules)
	sort.Slice(g.Artifacts, func(i, j int) bool {
		a, b := g.Artifacts[i], g.Artifacts[j]
		return repo.SparkFileName(a.Group, a.Artifact, a.Version, a.Classifier, a.Ext) < repo.SparkFileName(b.Group, b.Artifact, b.Version, b.Classifier, b.Ext)
	})
	// dedupe (two callers asking for the same artifact)
	out := g.Artifacts[:0]
	for i, a := range g.Artifacts {
		if i > 0 && a == g.Artifacts[i-1] {
			continue
		}
		out = append(out, a)
	}
	g.Artifacts = out

	for _, n := range e.nodes {
		if !aliveSet[n] && n.loaded {
			by := ""
			if w := e.selected[n.mid()]; w != nil && aliveSet[w] && w != n {
				by = w.id.Version
			}
			if n.evicted || by != "" {
				g.Evicted = append(g.Evicted, Eviction{Group: n.id.Group, Artifact: n.id.Artifact, Version: n.id.Version, By: by})
			}
		} else if n.evicted {
			by := ""
			if w := e.selected[n.mid()]; w != nil && w != n {
				by = w.id.Version
			}
			g.Evicted = append(g.Evicted, Eviction{Group: n.id.Group, Artifact: n.id.Artifact, Version: n.id.Version, By: by})
		}
	}
	sort.Slice(g.Evicted, func(i, j int) bool {
		return fmt.Sprint(g.Evicted[i]) < fmt.Sprint(g.Evicted[j])
	})
	g.Roots = e.tree(aliveSet)
	return g, nil
}

// tree renders the caller edges as a tree; each module's children are
// expanded once.
func (e *engine) tree(alive map[*inode]bool) []*Node {
	children := map[*inode][]*inode{}
	var roots []*inode
	nodes := make([]*inode, 0, len(e.nodes))
	for _, n := range e.nodes {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].order < nodes[j].order })
	for _, n := range nodes {
		for _, c := range n.callers {
			if c.parent == nil {
				roots = append(roots, n)
			} else {
				children[c.parent] = append(children[c.parent], n)
			}
		}
	}
	expanded := map[*inode]bool{}
	var mk func(n *inode) *Node
	mk = func(n *inode) *Node {
		out := &Node{Group: n.id.Group, Artifact: n.id.Artifact, Version: n.id.Version}
		if !alive[n] {
			out.Evicted = true
			if w := e.selected[n.mid()]; w != nil && w != n && alive[w] {
				out.By = w.id.Version
			}
			return out
		}
		if expanded[n] {
			return out
		}
		expanded[n] = true
		seen := map[*inode]bool{}
		for _, c := range children[n] {
			if !seen[c] {
				seen[c] = true
				out.Children = append(out.Children, mk(c))
			}
		}
		return out
	}
	var out []*Node
	seen := map[*inode]bool{}
	for _, r := range roots {
		if !seen[r] {
			seen[r] = true
			out = append(out, mk(r))
		}
	}
	return out
}

// noteExclusions records the exclusions of a caller's descriptor: a
// dependency no descriptor excludes is never excluded below any node, so
// excludedBelow answers without walking the callers (a walk per ancestor
// made deep chains cubic).
func (e *engine) noteExclusions(d *dd) {
	for _, x := range d.excl {
		if e.excls == nil {
			e.excls = map[maven.Exclusion]bool{}
		}
		if !e.excls[x] {
			e.excls[x] = true
			e.dirtyAll() // exclusion answers may change
		}
	}
}

// addCaller records a caller of n; with exclusions about, any exclusion
// answer may change (excludedBelow walks the callers), so every frame is
// dirty (graph_frames.go).
func (e *engine) addCaller(n *inode, c caller) {
	n.callers = append(n.callers, c)
	if len(e.excls) > 0 {
		e.dirtyAll()
	}
}

// anyExcludes: some caller's descriptor has an exclusion matching g:a.
func (e *engine) anyExcludes(g, a string) bool {
	return e.excls[maven.Exclusion{Group: g, Artifact: a}] || e.excls[maven.Exclusion{Group: "*", Artifact: a}] ||
		e.excls[maven.Exclusion{Group: g, Artifact: "*"}] || e.excls[maven.Exclusion{Group: "*", Artifact: "*"}]
}

// deepPath is the path length from which mediation uses an index instead
// of walking the path (which made each ancestor's dependency list cost the
// depth, and deep chains cubic).
const deepPath = 48

// mediateBelow is mediate(d, above + x) (x may be nil); above is a
// prefix of the frame stack, whose index of managers (frameStack.managed)
// answers on deep paths.
func (e *engine) mediateBelow(d *dd, above []*inode, x *inode) *dd {
	if len(above) < deepPath {
		path := above
		if x != nil {
			path = append(append(make([]*inode, 0, len(above)+1), above...), x)
		}
		return mediate(d, path)
	}
	if i, ok := e.fs.managed[[2]string{d.target.Group, d.target.Artifact}]; ok && i < len(above) {
		return mediate(d, above[i:i+1])
	}
	if x != nil {
		return mediate(d, []*inode{x})
	}
	return d
}
