package resolver

// Ivy's per-node configuration bookkeeping (IvyNode.confsToFetch,
// fetchedConfigurations, loadedRootModuleConfs and the usage's root module
// configurations), which decides when ResolveEngine.doFetchDependencies
// fetches a dependency in a configuration its caller did not ask for.

import (
	"sort"
	"strings"
)

// javaBucket is the bucket of s in a default-sized java.util.HashSet
// (String.hashCode, HashMap.hash, 16 buckets): the iteration order of
// Ivy's configuration sets.
func javaBucket(s string) int {
	var h int32
	for _, r := range s {
		h = 31*h + int32(r)
	}
	u := uint32(h)
	return int((u ^ (u >> 16)) & 15)
}

// javaOrder returns confs (in insertion order) in the iteration order of a
// java.util.HashSet filled in that order.
func javaOrder(confs []string) []string {
	out := append([]string{}, confs...)
	sort.SliceStable(out, func(i, j int) bool { return javaBucket(out[i]) < javaBucket(out[j]) })
	return out
}

// realConf is IvyNode.getRealConfs for a Maven descriptor: "compile(*)" is
// "compile" (every Maven 2 configuration exists).
func realConf(conf string) string {
	if i := strings.IndexByte(conf, '('); i > 0 && strings.HasSuffix(conf, ")") {
		return conf[:i]
	}
	return conf
}

// updateConfsToFetch is IvyNode.updateConfsToFetch.
func (n *inode) updateConfsToFetch(confs []string) {
	for _, c := range confs {
		if n.fetchedConfs[c] || hasString(n.toFetch, c) {
			continue
		}
		n.toFetch = append(n.toFetch, c)
	}
}

func (n *inode) removeToFetch(c string) {
	for i, x := range n.toFetch {
		if x == c {
			n.toFetch = append(n.toFetch[:i:i], n.toFetch[i+1:]...)
			return
		}
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addConfs is IvyNode.addRootModuleConfigurations: the configuration and
// the ones it extends.
func (n *inode) addConfs(conf string) {
	if n.confs == nil {
		n.confs = map[string]bool{}
	}
	for _, ext := range confExtends[conf] {
		n.addConfs(ext)
	}
	n.confs[conf] = true
}

// usageConfs is IvyNode.getConfigurations(root conf): the configurations
// of the node's usage and of the usages merged from the nodes it evicted,
// in HashSet order.
func (n *inode) usageConfs() []string {
	out := javaOrder(sortedKeys(n.confs))
	for _, c := range javaOrder(sortedKeys(n.mergedConfs)) {
		if !n.confs[c] {
			out = append(out, c)
		}
	}
	return out
}

// updateDataFrom is IvyNode.updateDataFrom(evicted, rootConf, false) as
// called by markEvicted on each selected node: the configurations the
// evicted node fetched or still had to fetch are to be fetched in the
// selected one, and its usage is merged.
func (n *inode) updateDataFrom(loser *inode) {
	n.updateConfsToFetch(javaOrder(sortedKeys(loser.fetchedConfs)))
	n.updateConfsToFetch(javaOrder(loser.toFetch))
	// mergedUsages keeps a copy of the evicted node's usages as they are now.
	if n.mergedConfs == nil {
		n.mergedConfs = map[string]bool{}
	}
	for _, c := range loser.usageConfs() {
		n.mergedConfs[c] = true
	}
}

// loadData is IvyNode.loadData followed by handleConfiguration for the
// root conf "default": it reports whether the node was (re)loaded for
// conf, which records conf as fetched.
func (e *engine) loadData(n *inode, conf string, parent *inode) bool {
	if n.loadErr != nil {
		return false
	}
	loaded := false
	switch {
	case e.isEvicted(n):
	case len(n.toFetch) == 0 && n.rootLoaded:
	default:
		n.rootLoaded = true
		e.load(n)
		if n.loadErr != nil {
			return false
		}
		loaded = true
	}
	if !n.loaded || n.noPOM {
		return loaded
	}
	// handleConfiguration
	rc := realConf(conf)
	if loaded {
		if n.fetchedConfs == nil {
			n.fetchedConfs = map[string]bool{}
		}
		n.fetchedConfs[conf] = true
		n.removeToFetch(rc)
		n.removeToFetch(conf)
	}
	// the configurations go into the visit node's usage (see gotoNode)
	e.usageOwner(parent, n).addConfs(rc)
	return loaded
}
