package resolver

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// MaxWhyPaths caps the paths Why lists per module: a module deep in a wide
// graph can be reached along exponentially many paths.
const MaxWhyPaths = 1000

// ModuleWhy explains why one module (group:artifact) is in a graph.
type ModuleWhy struct {
	Group, Artifact string
	// Chosen are the versions of the module that survived (usually one;
	// none when every version was evicted).
	Chosen []string
	// Paths are the paths from a root of the graph to each occurrence of
	// the module, in tree order, including those ending in a version that
	// was evicted. At most MaxWhyPaths; Truncated says there were more.
	Paths     []WhyPath
	Truncated bool
	// Evicted are the versions of the module that lost a conflict, and
	// the version that won (By, empty when Ivy names none).
	Evicted []Eviction
	// Evicts are the evictions the module caused itself: a direct
	// dependency of a chosen version of the module won a conflict.
	Evicts []CausedEviction
}

// WhyPath is one path from a root to an occurrence of the module. Every
// node but the last is a chosen module; the last is the module itself.
type WhyPath struct {
	// Nodes are "g:a:v", the root first.
	Nodes []string
	// Evicted is true when the version at the end of the path lost, to By.
	Evicted bool
	By      string
}

// CausedEviction is an eviction won by a dependency the module declares.
type CausedEviction struct {
	// Via is the module's own "g:a:v" that declares the dependency.
	Via string
	// Winner is the dependency "g:a:v" that won.
	Winner string
	// Evicted is the "g:a:v" that lost.
	Evicted string
}

// ParseWhyPattern checks a "group:artifact" pattern (Ivy globs allowed in
// either part, e.g. "org.slf4j:*"). A malformed pattern is errdefs.BadArgument.
func ParseWhyPattern(pattern string) (ExcludeRule, error) {
	parts := strings.Split(pattern, ":")
	if len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
		return ExcludeRule{}, errdefs.Errorf(errdefs.BadArgument, "module %q: want group:artifact (globs allowed, e.g. org.slf4j:*)", pattern)
	}
	r, err := newExcludeRule(strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]))
	if err != nil {
		return ExcludeRule{}, errdefs.New(errdefs.BadArgument, fmt.Errorf("module %q: %w", pattern, err))
	}
	return r, nil
}

// Why explains every module of g matching pattern ("group:artifact", globs
// allowed): the paths that brought it in, the version chosen, the versions
// evicted and what it evicted. The modules are sorted by group:artifact.
// When no module matches, the error matches ErrNotFound and
// errdefs.NotFound; a malformed pattern is errdefs.BadArgument.
func Why(g *Graph, pattern string) ([]ModuleWhy, error) {
	rule, err := ParseWhyPattern(pattern)
	if err != nil {
		return nil, err
	}
	if g == nil {
		g = &Graph{}
	}
	w := newWhyIndex(g)

	byModule := map[string]*ModuleWhy{}
	module := func(group, artifact string) *ModuleWhy {
		k := group + ":" + artifact
		m := byModule[k]
		if m == nil {
			m = &ModuleWhy{Group: group, Artifact: artifact}
			byModule[k] = m
		}
		return m
	}
	for _, k := range w.order {
		n := w.nodes[k]
		if !rule.Matches(n.Group, n.Artifact) {
			continue
		}
		m := module(n.Group, n.Artifact)
		if w.alive[k] {
			m.Chosen = append(m.Chosen, n.Version)
		}
	}
	for _, e := range g.Evicted {
		if rule.Matches(e.Group, e.Artifact) {
			m := module(e.Group, e.Artifact)
			m.Evicted = append(m.Evicted, e)
		}
	}
	if len(byModule) == 0 {
		return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("module %s is not in the resolved graph: %w", pattern, ErrNotFound))
	}

	w.paths(rule, byModule)

	out := make([]ModuleWhy, 0, len(byModule))
	for _, k := range sortedKeys(byModule) {
		m := byModule[k]
		sort.Strings(m.Chosen)
		for _, v := range m.Chosen {
			via := m.Group + ":" + m.Artifact + ":" + v
			for _, c := range w.children[via] {
				if c.Evicted {
					continue
				}
				for _, e := range w.evictedBy[c.Group+":"+c.Artifact+":"+c.Version] {
					m.Evicts = append(m.Evicts, CausedEviction{Via: via, Winner: c.Group + ":" + c.Artifact + ":" + c.Version, Evicted: e})
				}
			}
		}
		out = append(out, *m)
	}
	return out, nil
}

// whyIndex is the tree of a Graph folded into a graph keyed by "g:a:v": the
// tree expands each module's children once, so a module's later
// occurrences have no children of their own.
type whyIndex struct {
	roots    []*Node
	nodes    map[string]*Node   // one representative per key
	order    []string           // keys in first-seen tree order
	alive    map[string]bool    // keys with a non-evicted occurrence
	children map[string][]*Node // of alive keys, deduplicated
	// evictedBy maps a winning "g:a:v" to the "g:a:v"s it evicted.
	evictedBy map[string][]string
}

func newWhyIndex(g *Graph) *whyIndex {
	w := &whyIndex{roots: g.Roots, nodes: map[string]*Node{}, alive: map[string]bool{}, children: map[string][]*Node{}, evictedBy: map[string][]string{}}
	childSeen := map[string]map[string]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		k := n.key()
		if _, ok := w.nodes[k]; !ok {
			w.nodes[k] = n
			w.order = append(w.order, k)
		}
		if n.Evicted {
			return
		}
		w.alive[k] = true
		if childSeen[k] == nil {
			childSeen[k] = map[string]bool{}
		}
		for _, c := range n.Children {
			ck := c.key()
			if c.Evicted {
				ck += "!"
			}
			if !childSeen[k][ck] {
				childSeen[k][ck] = true
				w.children[k] = append(w.children[k], c)
			}
			walk(c)
		}
	}
	for _, r := range g.Roots {
		walk(r)
	}
	for _, e := range g.Evicted {
		if e.By != "" {
			win := e.Group + ":" + e.Artifact + ":" + e.By
			w.evictedBy[win] = append(w.evictedBy[win], e.Group+":"+e.Artifact+":"+e.Version)
		}
	}
	return w
}

func (n *Node) key() string { return n.Group + ":" + n.Artifact + ":" + n.Version }

// paths fills Paths of the modules: a depth-first walk from the roots that
// enters only the modules from which a match can be reached.
func (w *whyIndex) paths(rule ExcludeRule, mods map[string]*ModuleWhy) {
	// reach: the alive keys with a path to a match (reverse BFS, so cycles
	// are handled).
	parents := map[string][]string{}
	for p, cs := range w.children {
		for _, c := range cs {
			parents[c.key()] = append(parents[c.key()], p)
		}
	}
	reach := map[string]bool{}
	var queue []string
	for _, k := range w.order {
		if n := w.nodes[k]; rule.Matches(n.Group, n.Artifact) {
			reach[k] = true
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, p := range parents[k] {
			if !reach[p] {
				reach[p] = true
				queue = append(queue, p)
			}
		}
	}

	full := func() bool {
		for _, m := range mods {
			if !m.Truncated {
				return false
			}
		}
		return true
	}
	var stack []string
	onStack := map[string]bool{}
	var visit func(n *Node) bool // false: every module is full, stop
	visit = func(n *Node) bool {
		k := n.key()
		if !reach[k] || onStack[k] {
			return true
		}
		stack = append(stack, k)
		defer func() { stack = stack[:len(stack)-1] }()
		if rule.Matches(n.Group, n.Artifact) {
			m := mods[n.Group+":"+n.Artifact]
			if len(m.Paths) >= MaxWhyPaths {
				if !m.Truncated {
					m.Truncated = true
					if full() {
						return false
					}
				}
			} else {
				m.Paths = append(m.Paths, WhyPath{Nodes: append([]string(nil), stack...), Evicted: n.Evicted, By: n.By})
			}
		}
		if n.Evicted {
			return true
		}
		onStack[k] = true
		defer delete(onStack, k)
		for _, c := range w.children[k] {
			if !visit(c) {
				return false
			}
		}
		return true
	}
	for _, r := range w.roots {
		if !visit(r) {
			return
		}
	}
}
