package resolver

// Linear conflict walks for modules with one node (issue 15, "Deep
// graphs").
//
// Ivy's resolveConflict walks from a node's parent up to the root on every
// fetch, and each ancestor keeps its own resolved nodes per module
// (IvyNode.selectedDeps). A chain of N modules thus costs O(N²) steps and
// table entries in Ivy and in a literal replay (a chain of 1,000 took
// 29.5 s and 329 MB). Most modules of a graph have one version only: for
// such a module the walk selects the node at every ancestor, evicts
// nothing, and its one observable effect besides those table entries is
// what computeConflicts' IvyNode.getDependencies call does at each
// ancestor that had not selected the node yet: confsToFetch updates and
// dependency descriptors recorded on that ancestor's dependencies
// (engine.depsOf). So, while a module has one node ("lazy" nodes):
//
//   - the table entries are not written: the node records the top frame
//     of each walk (a frame is one ResolveEngine.doFetchDependencies of a
//     node with dependencies, i.e. one visit path), and the entries are
//     written from those records only when a second node of the module
//     appears (materialize), before anything reads them;
//   - getDependencies is replayed only at the ancestors where it can still
//     change something: a frame is "verified" once its depsOf ran, and
//     stays so until an event that could make depsOf do something new
//     (its node's usage gains a configuration, a dependency of it loses a
//     configuration to fetch it has not fetched, or an exclusion answer
//     may change), which marks it dirty again. A walk replays the dirty
//     frames of its path whose node had not selected the node yet, in the
//     order Ivy walks (parent first), and skips the verified ones.
//
// A walk is then O(1) plus its dirty frames, and a chain is linear
// (BenchmarkDeepChain). Modules with several nodes keep the literal walk
// (resolveConflict). The parity goldens and the differential run check
// that the results are Ivy's.

import (
	"context"
	"sort"
)

// frame is one doFetch of a node (its children's visit path ends with
// it); prefix identifies the path above it by its nodes.
type frame struct {
	node    *inode
	parent  *frame
	prefix  *pathKey
	depth   int
	serial  uint64
	managed [][2]string // the modules this frame is the topmost manager of
}

// pathKey interns a visit path by its nodes: two frames with the same
// nodes above them mediate alike (dependencyManagement of the dependers).
type pathKey struct {
	parent *pathKey
	node   *inode
}

// depsMemo is, per node, the state in which its depsOf last ran: under
// that path, with the node's and the engine's event counters then.
type depsMemo struct {
	prefix      *pathKey
	gen, global uint64
	ran         bool
}

// frameStack is the engine's stack of frames (the current visit path)
// and the dirty ones.
type frameStack struct {
	frames  []*frame
	serial  uint64
	onStack map[*inode][]int // depths of a node's frames on the stack
	dirty   []int            // depths of frames that may be unverified (duplicates and stale entries allowed)
	paths   map[pathKey]*pathKey
	global  uint64 // exclusion events
	// midCount: frames per module (isCircular); managed: the depth of the
	// topmost frame whose node manages a module's version (what mediate
	// finds walking the path).
	midCount map[string]int
	managed  map[[2]string]int
}

func (e *engine) pushFrame(n *inode) {
	s := &e.fs
	if s.onStack == nil {
		s.onStack, s.paths = map[*inode][]int{}, map[pathKey]*pathKey{}
		s.midCount, s.managed = map[string]int{}, map[[2]string]int{}
	}
	s.serial++
	f := &frame{node: n, depth: len(s.frames), serial: s.serial}
	if len(s.frames) > 0 {
		f.parent = s.frames[len(s.frames)-1]
		k := pathKey{f.parent.prefix, f.parent.node}
		if s.paths[k] == nil {
			s.paths[k] = &k
		}
		f.prefix = s.paths[k]
	}
	s.frames = append(s.frames, f)
	s.onStack[n] = append(s.onStack[n], f.depth)
	s.midCount[n.mid()]++
	if n.model != nil {
		for _, me := range n.model.Managed {
			k := [2]string{me.Group, me.Artifact}
			if _, ok := s.managed[k]; ok {
				continue
			}
			if v, ok := n.model.ManagedVersion(me.Group, me.Artifact); ok && v != "" {
				s.managed[k] = f.depth
				f.managed = append(f.managed, k)
			}
		}
	}
	if !e.verified(f) {
		s.dirty = append(s.dirty, f.depth)
	}
}

func (e *engine) popFrame() {
	s := &e.fs
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	d := s.onStack[f.node]
	if len(d) == 1 {
		delete(s.onStack, f.node)
	} else {
		s.onStack[f.node] = d[:len(d)-1]
	}
	if s.midCount[f.node.mid()]--; s.midCount[f.node.mid()] == 0 {
		delete(s.midCount, f.node.mid())
	}
	for _, k := range f.managed {
		delete(s.managed, k)
	}
}

// verified: the frame's depsOf ran in the current state (it would do
// nothing new).
func (e *engine) verified(f *frame) bool {
	m := &f.node.memo
	return m.ran && m.prefix == f.prefix && m.gen == f.node.gen && m.global == e.fs.global
}

func (e *engine) setVerified(f *frame) {
	f.node.memo = depsMemo{prefix: f.prefix, gen: f.node.gen, global: e.fs.global, ran: true}
}

// dirtyNode: n's depsOf may do something new.
func (e *engine) dirtyNode(n *inode) {
	n.gen++
	s := &e.fs
	s.dirty = append(s.dirty, s.onStack[n]...)
}

// dirtyAll: an exclusion answer may change, every depsOf may do more.
func (e *engine) dirtyAll() {
	s := &e.fs
	s.global++
	for _, f := range s.frames {
		s.dirty = append(s.dirty, f.depth)
	}
}

// lostToFetch: n no longer has conf to fetch and has not fetched it, so
// the depsOf of its dependers would add it again.
func (e *engine) lostToFetch(n *inode) {
	for a := range n.declaredBy {
		e.dirtyNode(a)
	}
	for _, c := range n.callers {
		if c.parent == nil {
			e.dirtyNode(e.root)
			break
		}
	}
}

// takeDirty returns the unverified frames at depth ≤ top, deepest first,
// and keeps the others listed.
func (e *engine) takeDirty(top int) []int {
	s := &e.fs
	var out, keep []int
	seen := map[int]bool{}
	for _, d := range s.dirty {
		if d >= len(s.frames) || seen[d] || e.verified(s.frames[d]) {
			continue // stale (popped; a new frame at d listed itself) or duplicate
		}
		seen[d] = true
		if d <= top {
			out = append(out, d)
		} else {
			keep = append(keep, d)
		}
	}
	s.dirty = keep
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// selectedIn reports whether the ancestor of the frame at depth j has
// selected the lazy node n already (it is on a recorded walk).
func (e *engine) selectedIn(n *inode, j int) bool {
	f := e.fs.frames[j]
	a := f.node
	if n.walked[a] {
		return true
	}
	for _, r := range n.records {
		// a frame created while f is on the stack descends from f
		hit := r.serial >= f.serial
		for x := r; !hit && x != nil; x = x.parent {
			hit = x.node == a
		}
		if hit {
			if n.walked == nil {
				n.walked = map[*inode]bool{}
			}
			n.walked[a] = true
			return true
		}
	}
	return false
}

// conflict is ResolveEngine.resolveConflict(node, conf) for the visit of n
// along path (the frame stack): the literal walk, or for a lazy node the
// walk described at the top of this file.
func (e *engine) conflict(ctx context.Context, n *inode, path []*inode) {
	top := len(path) - 1
	if n.lazy && (top >= len(e.fs.frames) || e.fs.frames[top].node != path[top]) {
		e.materialize(n) // not a visit of the frame stack: the literal walk
	}
	if !n.lazy {
		e.resolveConflict(ctx, n, path, top, nil)
		return
	}
	dirty := e.takeDirty(top)
	for k, j := range dirty {
		if e.selectedIn(n, j) {
			// Ivy does not call getDependencies here; if it would change
			// nothing, the frame is verified all the same.
			if e.depsOfIsNoop(ctx, path[j], path[:j]) {
				e.setVerified(e.fs.frames[j])
			} else {
				e.fs.dirty = append(e.fs.dirty, j)
			}
			continue
		}
		e.depsOf(ctx, path[j], path[:j])
		e.setVerified(e.fs.frames[j])
		if n.lazy {
			continue
		}
		// depsOf created a second node of n's module (materialize ran):
		// the ancestors above j selected n, ancestor j sees a conflict.
		e.fs.dirty = append(e.fs.dirty, dirty[k+1:]...)
		for _, a := range path[j+1:] {
			e.selectAt(a, n)
		}
		e.resolveConflict(ctx, n, path, j, nil)
		return
	}
	if r := e.fs.frames[top]; len(n.records) == 0 || n.records[len(n.records)-1] != r {
		n.records = append(n.records, r)
	}
	e.selectAt(e.root, n)
}

// frameAt is the frame of path[i] when path is the frame stack's path.
func (e *engine) frameAt(path []*inode, i int) *frame {
	if i < len(e.fs.frames) && e.fs.frames[i].node == path[i] {
		return e.fs.frames[i]
	}
	return nil
}

// selectAt writes the table entry "ancestor a selected n" of a lazy walk.
func (e *engine) selectAt(a, n *inode) {
	key := ancMid{a, n.mid()}
	if !hasVersion(e.sel[key], n) {
		e.sel[key] = append(e.sel[key], n)
		e.midGen[key.mid]++
	}
}

// materialize writes the table entries of a lazy node's walks (a second
// node of its module appeared) and ends its laziness.
func (e *engine) materialize(n *inode) {
	if !n.lazy {
		return
	}
	n.lazy = false
	seen := map[*inode]bool{}
	for _, r := range n.records {
		for x := r; x != nil; x = x.parent {
			if !seen[x.node] {
				seen[x.node] = true
				e.selectAt(x.node, n)
			}
		}
	}
	n.records, n.walked = nil, nil
}
