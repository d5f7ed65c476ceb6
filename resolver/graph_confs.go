package resolver

// Ivy's per-node configuration bookkeeping (IvyNode.confsToFetch,
// fetchedConfigurations, loadedRootModuleConfs and the usage's root module
// configurations), which decides when ResolveEngine.doFetchDependencies
// fetches a dependency in a configuration its caller did not ask for.

import (
	"context"
	"errors"
	"fmt"
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
			if !n.fetchedConfs[c] && n.eng != nil {
				n.eng.lostToFetch(n)
			}
			return
		}
	}
}

// confAdded: n's usage configurations grew, so its depsOf may do more.
func (n *inode) confAdded() {
	if n.eng != nil {
		n.eng.dirtyNode(n)
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
	if !n.confs[conf] {
		n.confs[conf] = true
		n.confAdded()
	}
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
		if !n.mergedConfs[c] {
			n.mergedConfs[c] = true
			n.confAdded()
		}
	}
}

// loadData is IvyNode.loadData followed by handleConfiguration for the
// root conf "default": it reports whether the node was (re)loaded for
// conf, which records conf as fetched. pconf is the parent's conf (for
// the error message).
func (e *engine) loadData(ctx context.Context, n *inode, conf string, parent *inode, pconf string) bool {
	if n.loadErr != nil {
		return false
	}
	loaded := false
	switch {
	case e.isEvicted(n):
	case len(n.toFetch) == 0 && n.rootLoaded:
	default:
		n.rootLoaded = true
		e.load(ctx, n)
		if n.loadErr != nil {
			return false
		}
		loaded = true
	}
	if !n.loaded {
		return loaded
	}
	if n.noPOM {
		return e.handleDefaultDescriptorConf(n, conf, parent, pconf, loaded)
	}
	// handleConfiguration (a POM's descriptor has every Maven 2
	// configuration)
	rc := realConf(conf)
	if loaded {
		n.markFetched(conf, rc)
	}
	// the configurations go into the visit node's usage (see gotoNode)
	e.usageOwner(parent, n).addConfs(rc)
	return loaded
}

func (n *inode) markFetched(conf string, real ...string) {
	if n.fetchedConfs == nil {
		n.fetchedConfs = map[string]bool{}
	}
	n.fetchedConfs[conf] = true
	for _, c := range real {
		n.removeToFetch(c)
	}
	n.removeToFetch(conf)
}

// ErrConfigurationNotFound is Ivy's "configuration not found" problem: a
// caller asks a module for a configuration its descriptor lacks (only the
// default descriptor of a module without POM lacks any), an unresolved
// dependency (errdefs.Invalid).
var ErrConfigurationNotFound = errors.New("configuration not found")

// handleDefaultDescriptorConf is IvyNode.handleConfiguration (ivy 2.5.1
// src/java/org/apache/ivy/core/resolve/IvyNode.java) for a module
// resolved without POM: Ivy gives it DefaultModuleDescriptor's default
// instance, whose one configuration is "default" (no extends), so
// "compile(*)" and "master(*)" fall back to it but a plain "master",
// "compile" or "runtime" is not found. Those come from confsToFetch when
// the module evicted a version with a POM (updateDataFrom copies the
// loser's fetched configurations) and are fetched by
// doFetchDependencies's "confs still to fetch" loop. handleConfiguration
// first adds the real confs to the visit's usage (addRootModuleConfigurations),
// then, for a missing one, sets the problem "configuration not found"
// unless isConfRequiredByMergedUsageOnly: the node's own usage lacks
// conf (it was asked for only by the usage of an evicted node). So
// --packages org.apache:test-classified:1.0,org.apache:test-classifier:2.0
// (Ivy's m2 test repository) fails in Spark, golden
// m2-classified-nopom-evicts-pom (issue 19). The problem does not stop
// the loop over the confs still to fetch (ResolveEngine.doFetchDependencies
// tests hasProblem before it, not in it) and each missing conf replaces
// it, so Ivy reports the last one.
func (e *engine) handleDefaultDescriptorConf(n *inode, conf string, parent *inode, pconf string, loaded bool) bool {
	real := defaultDescriptorRealConfs(conf)
	owner := e.usageOwner(parent, n)
	for _, c := range real {
		owner.addConfs1(c)
	}
	for _, c := range real {
		if c == "default" {
			continue
		}
		n.removeToFetch(conf)
		if n.confs[conf] {
			msg := fmt.Sprintf("configuration not found in %s: '%s'. It was required from %s %s", ivyID(n), c, e.ivyID(parent), pconf)
			if conf != c {
				msg = fmt.Sprintf("configuration not found in %s: '%s'. Missing configuration: '%s'. It was required from %s %s",
					ivyID(n), conf, c, e.ivyID(parent), pconf)
			}
			// IvyNode.problem: the last one set is reported (see visitDep)
			n.confProblem = fmt.Errorf("%w%s", ErrConfigurationNotFound, strings.TrimPrefix(msg, "configuration not found"))
		}
		return loaded
	}
	if loaded {
		n.markFetched(conf, real...)
	}
	return loaded
}

// defaultDescriptorRealConfs is IvyNode.getRealConfs on the default
// descriptor (one public configuration, "default"): "x(y)" is x when x is
// "default", else y ("" for none, "*" for every public one).
func defaultDescriptorRealConfs(conf string) []string {
	main, fallback := "", conf
	if i := strings.IndexByte(conf, '('); i > 0 && strings.HasSuffix(conf, ")") {
		main, fallback = conf[:i], conf[i+1:len(conf)-1]
	}
	switch {
	case main == "default":
		return []string{"default"}
	case fallback == "":
		return nil
	case fallback == "*":
		return []string{"default"}
	}
	var out []string
	for _, c := range strings.Split(fallback, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// addConfs1 adds one configuration without the ones it extends (the
// default descriptor's configurations extend nothing).
func (n *inode) addConfs1(conf string) {
	if n.confs == nil {
		n.confs = map[string]bool{}
	}
	if !n.confs[conf] {
		n.confs[conf] = true
		n.confAdded()
	}
}

// ivyID is Ivy's ModuleRevisionId.toString.
func ivyID(n *inode) string {
	return n.id.Group + "#" + n.id.Artifact + ";" + n.id.Version
}

// ivyID names a parent as Ivy does; the root module is Spark's
// spark-submit-parent (without its random suffix).
func (e *engine) ivyID(n *inode) string {
	if n == nil || n == e.root {
		return "org.apache.spark#spark-submit-parent;1.0"
	}
	return ivyID(n)
}
