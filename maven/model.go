package maven

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Coord is a module revision: groupId, artifactId, version.
type Coord struct{ Group, Artifact, Version string }

func (c Coord) String() string { return c.Group + ":" + c.Artifact + ":" + c.Version }

// Exclusion is one <exclusion>; "*" in a field matches anything (Ivy's
// ExactPatternMatcher treats a lone "*" as "any").
type Exclusion struct{ Group, Artifact string }

// Matches reports whether the exclusion covers group:artifact.
func (e Exclusion) Matches(group, artifact string) bool {
	return (e.Group == "*" || e.Group == group) && (e.Artifact == "*" || e.Artifact == artifact)
}

// Dependency is one dependency as Ivy's PomModuleDescriptorBuilder sees it:
// version and scope filled from dependencyManagement, exclusions inherited
// from it when the dependency has none.
type Dependency struct {
	Group, Artifact, Version string
	Scope                    string // compile, runtime, provided, test or system (unknown → compile)
	Optional                 bool
	Classifier               string
	Type                     string // "" when absent
	Exclusions               []Exclusion
	// NonTransitive is set by a "*:*" exclusion.
	NonTransitive bool
}

// Managed is one dependencyManagement entry.
type Managed struct {
	Group, Artifact, Version, Scope, Type string
	// Classifier is read for Loader.ManagedByKind's matching only.
	Classifier string
	Exclusions []Exclusion
}

// Model is the effective descriptor of one module, as Ivy builds it.
type Model struct {
	Coord
	Packaging string
	// Relocation, when set, is where the module moved to another
	// groupId/artifactId: Ivy then keeps the module as an artifact-less
	// stub with a single dependency on the target (same confs).
	Relocation *Coord
	// VersionRelocated marks a relocation to another version of the same
	// module: Ivy keeps the target's dependencies and no artifact.
	VersionRelocated bool
	// Dependencies in Ivy's order: the POM's own, then the inherited ones.
	Dependencies []Dependency
	// Managed is the effective dependencyManagement, in insertion order
	// (later entries with the same groupId:artifactId replace earlier ones).
	Managed []Managed
	// props are the properties a child POM inherits (Ivy's extra infos), in
	// order, nearest first; the first entry of a name wins.
	props [][2]string
	// raw inherited elements, re-interpolated by each child (Ivy re-reads
	// the parent's elements with the child's properties).
	rawDeps []pomDependency
	rawMgmt []mgmtEntry
	// rawMgmtKinds is the dependencyManagement keyed by
	// groupId:artifactId:type:classifier, built with
	// Loader.ManagedByKind only.
	rawMgmtKinds []mgmtEntry
	hasModel     bool

	once       sync.Once
	managedIdx map[[2]string]string
}

type mgmtEntry struct {
	raw      *pomDependency // nil for an entry imported from a BOM
	resolved Managed
}

// Fetcher gives the bytes of a POM; name identifies it in errors (a URL
// without credentials).
type Fetcher interface {
	FetchPOM(ctx context.Context, group, artifact, version string) (data []byte, name string, err error)
}

// RevisionResolver is implemented by a Fetcher that resolves dynamic
// revisions ("[1.0,2.0)", "1.+", "latest.release"). The Loader then
// resolves the versions of parents and imported BOMs through it before
// loading them, as Ivy does: PomModuleDescriptorParser asks the resolver
// chain for the parent's (and the BOM's) descriptor, version matchers
// included (checked with the oracle: synth-dynpar-* cases). A fixed
// revision is returned unchanged.
type RevisionResolver interface {
	ResolveRevision(ctx context.Context, group, artifact, version string) string
}

// ErrCycle is matched by a parent (or import) cycle.
var ErrCycle = errors.New("cycle")

// Loader builds effective models, memoising them; it is safe for
// concurrent use.
type Loader struct {
	f Fetcher
	// Profile activation environment.
	Env ProfileEnv
	// ManagedByKind is Ivy 2.6.0's dependencyManagement (IVY-1654): an
	// entry gives its version, scope and exclusions to a dependency only
	// when their groupId, artifactId, type ("" is jar) and classifier are
	// the same. Ivy 2.5 matches on groupId:artifactId alone, the last such
	// entry winning whatever its type or classifier. Transitive version
	// mediation (Model.Managed, ManagedVersion) is by groupId:artifactId in
	// both. Set it before the first Load.
	ManagedByKind bool

	mu    sync.Mutex
	cache map[Coord]*loadCall
}

type loadCall struct {
	c    Coord
	done chan struct{}
	m    *Model
	err  error
	// blockedOn is the load that c's build waits for now (its parent, a
	// relocation target or a BOM), nil when none; guarded by Loader.mu.
	// Following it from call to call crosses the goroutines that build
	// them: a chain back to a module the caller builds is a cycle that
	// waiting would turn into a deadlock.
	blockedOn *loadCall
}

// NewLoader returns a Loader reading POMs through f.
func NewLoader(f Fetcher) *Loader {
	return &Loader{f: f, cache: map[Coord]*loadCall{}, Env: DefaultProfileEnv()}
}

// Load returns the effective model of g:a:v (parents and imports loaded
// recursively). Concurrent loads of the same module are merged.
func (l *Loader) Load(ctx context.Context, group, artifact, version string) (*Model, error) {
	return l.load(ctx, Coord{group, artifact, version}, nil)
}

// load is Load for c when the modules of stack (outermost first) need it:
// as their parent, relocation target or imported BOM. c on the stack
// again is a cycle.
func (l *Loader) load(ctx context.Context, c Coord, stack []Coord) (*Model, error) {
	if err := CheckCoord(c); err != nil {
		return nil, err
	}
	if err := cycleErr(stack, []Coord{c}); err != nil {
		return nil, err
	}
	l.mu.Lock()
	var from *loadCall // the build that needs c
	if len(stack) > 0 {
		from = l.cache[stack[len(stack)-1]]
	}
	call, ok := l.cache[c]
	if ok {
		// c is built by another goroutine. If that build waits, through
		// other loads, for one this goroutine builds (stack), neither
		// would ever finish.
		var chain []Coord
		for x := call; x != nil && len(chain) <= len(l.cache); x = x.blockedOn {
			chain = append(chain, x.c)
			if err := cycleErr(stack, chain); err != nil {
				l.mu.Unlock()
				return nil, err
			}
		}
	} else {
		call = &loadCall{c: c, done: make(chan struct{})}
		l.cache[c] = call
	}
	if from != nil {
		from.blockedOn = call
		defer func() {
			l.mu.Lock()
			from.blockedOn = nil
			l.mu.Unlock()
		}()
	}
	l.mu.Unlock()
	if !ok {
		call.m, call.err = l.build(ctx, c, append(append([]Coord{}, stack...), c))
		close(call.done)
		return call.m, call.err
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return call.m, call.err
}

// cycleErr is the ErrCycle for the loads of stack followed by those of
// next, when the last of next is on the stack; nil otherwise.
func cycleErr(stack, next []Coord) error {
	last := next[len(next)-1]
	for i, s := range stack {
		if s == last {
			var names []string
			for _, x := range append(stack[i:len(stack):len(stack)], next[:len(next)-1]...) {
				names = append(names, x.String())
			}
			return fmt.Errorf("%w: %s -> %s", ErrCycle, strings.Join(names, " -> "), last)
		}
	}
	return nil
}

// resolve resolves c's revision when the Fetcher is a RevisionResolver.
func (l *Loader) resolve(ctx context.Context, c Coord) Coord {
	if r, ok := l.f.(RevisionResolver); ok {
		c.Version = r.ResolveRevision(ctx, c.Group, c.Artifact, c.Version)
	}
	return c
}

// build loads c's effective model; stack ends with c.
func (l *Loader) build(ctx context.Context, c Coord, stack []Coord) (*Model, error) {
	data, name, err := l.f.FetchPOM(ctx, c.Group, c.Artifact, c.Version)
	if err != nil {
		return nil, err
	}
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m, err := l.effective(ctx, p, stack)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// props is Ivy's PomReader property table: first set wins (interp.set).
type props map[string]string

// ErrCyclicProperty is matched by a property defined in terms of itself.
var ErrCyclicProperty = errors.New("cyclic property definition")

// ErrExpansion is matched by a property expansion over the limits
// (MaxExpansion, MaxExpansionDepth, the budget of a POM): a "billion
// laughs" POM.
var ErrExpansion = errors.New("property expansion over the limit")

// Limits of ${…} expansion. Ivy has none; real POMs stay far below them.
const (
	// MaxExpansion is the longest value an expansion may produce.
	MaxExpansion = 64 << 10
	// MaxExpansionDepth is the deepest nesting of properties defined by
	// other properties.
	MaxExpansionDepth = 64
	// maxPOMExpansion is how many bytes the expansions of one POM (and of
	// the elements it inherits) may produce in all.
	maxPOMExpansion = 16 << 20
)

// Interpolate substitutes ${name} as Ivy's IvyPatternHelper does: values
// are expanded recursively, unknown names are left as they are, and a
// cycle is an error. Each property is expanded once (memoized); a value
// over MaxExpansion bytes, a nesting deeper than MaxExpansionDepth or more
// than 16 MiB produced in all is an error matching ErrExpansion.
func Interpolate(s string, vars map[string]string) (string, error) {
	x := &expander{vars: vars, budget: maxPOMExpansion}
	return x.expand(s)
}

// expander expands ${…} over vars, memoizing each property's expansion;
// budget is what it may still produce, in bytes.
type expander struct {
	vars   map[string]string
	memo   map[string]string
	stack  []string
	budget int
}

// nextRef finds the next reference in s from i on, as the regular
// expression \$\{(.*?)\} does (no newline inside): the match s[start:end]
// and its name; ok is false when there is none.
func nextRef(s string, i int) (start, end int, name string, ok bool) {
	for {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			return 0, 0, "", false
		}
		start = i + j
		k := strings.IndexAny(s[start+2:], "}\n")
		if k >= 0 && s[start+2+k] == '}' {
			return start, start + 2 + k + 1, s[start+2 : start+2+k], true
		}
		i = start + 1
	}
}

func (x *expander) expand(s string) (string, error) {
	start, end, name, ok := nextRef(s, 0)
	if !ok {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for ok {
		b.WriteString(s[last:start])
		val, known := x.vars[name]
		if known {
			var err error
			if val, err = x.property(name, val); err != nil {
				return "", err
			}
		} else {
			val = s[start:end]
		}
		if b.Len()+len(val) > MaxExpansion {
			return "", x.tooLong(name)
		}
		b.WriteString(val)
		last = end
		start, end, name, ok = nextRef(s, end)
	}
	if b.Len()+len(s)-last > MaxExpansion {
		return "", x.tooLong("")
	}
	b.WriteString(s[last:])
	x.budget -= b.Len()
	if x.budget < 0 {
		return "", fmt.Errorf("%w: the expansions of this POM produce more than %d bytes", ErrExpansion, maxPOMExpansion)
	}
	return b.String(), nil
}

// property is the expansion of the property name, whose raw value is raw.
func (x *expander) property(name, raw string) (string, error) {
	if v, ok := x.memo[name]; ok {
		return v, nil
	}
	for _, n := range x.stack {
		if n == name {
			return "", fmt.Errorf("%w: %s", ErrCyclicProperty, strings.Join(append(x.stack, name), " -> "))
		}
	}
	if len(x.stack) >= MaxExpansionDepth {
		return "", fmt.Errorf("%w: properties nested more than %d deep (${%s})", ErrExpansion, MaxExpansionDepth, x.stack[0])
	}
	x.stack = append(x.stack, name)
	v, err := x.expand(raw)
	x.stack = x.stack[:len(x.stack)-1]
	if err != nil {
		return "", err
	}
	if x.memo == nil {
		x.memo = map[string]string{}
	}
	x.memo[name] = v
	return v, nil
}

func (x *expander) tooLong(name string) error {
	if len(x.stack) > 0 {
		name = x.stack[0]
	}
	if name != "" {
		return fmt.Errorf("%w: ${%s} expands to more than %d bytes", ErrExpansion, name, MaxExpansion)
	}
	return fmt.Errorf("%w: a value expands to more than %d bytes", ErrExpansion, MaxExpansion)
}

// interp interpolates one POM's elements with its properties. The
// expansions are memoized until the properties change (set, reset).
type interp struct {
	vars props
	x    *expander
	err  error
}

func newInterp() *interp {
	in := &interp{vars: props{}}
	in.x = &expander{vars: in.vars, budget: maxPOMExpansion}
	return in
}

// set sets a property unless it is set (Ivy's first set wins), forgetting
// the memoized expansions.
func (in *interp) set(k, v string) {
	if _, ok := in.vars[k]; !ok {
		in.vars[k] = v
		in.x.memo = nil
	}
}

// reset empties the properties.
func (in *interp) reset() {
	clear(in.vars)
	in.x.memo = nil
}

func (in *interp) s(raw string) string {
	v := strings.TrimSpace(raw)
	if v == "" {
		return ""
	}
	if in.err != nil && errors.Is(in.err, ErrExpansion) {
		return "" // the POM is refused; do not spend the limits again
	}
	out, err := in.x.expand(v)
	if err != nil && in.err == nil {
		in.err = err
	}
	return strings.TrimSpace(out)
}

// effective is the model of p, whose coordinates end stack.
func (l *Loader) effective(ctx context.Context, p *project, stack []Coord) (*Model, error) {
	m := &Model{hasModel: true}
	in := newInterp()
	var parent *Model
	setParentVars := func() {
		if p.Parent != nil {
			pv, pg := in.s(p.Parent.Version), in.s(p.Parent.GroupID)
			in.set("parent.version", pv)
			in.set("parent.groupId", pg)
			in.set("project.parent.version", pv)
			in.set("project.parent.groupId", pg)
		}
	}
	setParentVars()
	for _, kv := range ownProperties(p, nil) {
		in.set(kv[0], kv[1])
	}
	if p.Parent != nil {
		pc := Coord{in.s(p.Parent.GroupID), in.s(p.Parent.ArtifactID), in.s(p.Parent.Version)}
		if in.err != nil {
			return nil, in.err
		}
		pc = l.resolve(ctx, pc)
		var err error
		parent, err = l.load(ctx, pc, stack)
		if err != nil {
			return nil, fmt.Errorf("impossible to load parent %s: %w", pc, err)
		}
		for k, v := range parent.propertyMap() {
			in.set(k, v)
		}
	}
	// Profile activation sees the POM's own properties and the JVM's
	// system properties, not the parents' (checked with the oracle); the
	// variables are then rebuilt with the active profiles' properties in
	// their place.
	actProps := map[string]string{}
	for k, v := range l.Env.SystemProperties {
		actProps[k] = v
	}
	for _, kv := range ownProperties(p, nil) {
		actProps[kv[0]] = kv[1]
	}
	active := l.activeProfiles(p, actProps)
	own := ownProperties(p, active)
	in.reset()
	setParentVars()
	for _, kv := range own {
		in.set(kv[0], kv[1])
	}
	if parent != nil {
		for k, v := range parent.propertyMap() {
			in.set(k, v)
		}
	}
	m.Group = in.s(p.GroupID)
	if m.Group == "" && p.Parent != nil {
		m.Group = in.s(p.Parent.GroupID)
	}
	m.Artifact = in.s(p.ArtifactID)
	m.Version = in.s(p.Version)
	if m.Version == "" && p.Parent != nil {
		m.Version = in.s(p.Parent.Version)
	}
	m.Packaging = in.s(p.Packaging)
	if m.Packaging == "" {
		m.Packaging = "jar"
	}
	m.props = append(m.props, own...)
	if parent != nil {
		m.props = append(m.props, parent.props...)
	}

	if reloc := relocationOf(p); reloc != nil {
		rc := Coord{in.s(reloc.GroupID), in.s(reloc.ArtifactID), in.s(reloc.Version)}
		if in.err != nil {
			return nil, in.err
		}
		if rc.Group == "" {
			rc.Group = m.Group
		}
		if rc.Artifact == "" {
			rc.Artifact = m.Artifact
		}
		if rc.Version == "" {
			rc.Version = m.Version
		}
		if err := CheckCoord(rc); err != nil {
			return nil, fmt.Errorf("relocation: %w", err)
		}
		if rc.Group == m.Group && rc.Artifact == m.Artifact {
			// Ivy: "Relocation to an other version number not supported":
			// only the relocated element's dependencies are kept.
			target, err := l.load(ctx, rc, stack)
			if err != nil {
				return nil, fmt.Errorf("impossible to load module %s to which %s has been relocated: %w", rc, m.Coord, err)
			}
			m.VersionRelocated = true
			m.Dependencies = target.Dependencies
			// The target may itself be relocated to another module: its
			// dependency on that module is what Ivy copies.
			m.Relocation = target.Relocation
			return m, in.err
		}
		m.Relocation = &rc
		return m, in.err
	}

	for _, k := range []string{"project.groupId", "pom.groupId", "groupId"} {
		in.set(k, m.Group)
	}
	for _, k := range []string{"project.artifactId", "pom.artifactId", "artifactId"} {
		in.set(k, m.Artifact)
	}
	for _, k := range []string{"project.version", "pom.version", "version"} {
		in.set(k, m.Version)
	}

	// dependencyManagement: the parent's (re-read with our properties), then ours.
	// kmgmt is Ivy 2.6.0's table keyed by type and classifier too.
	mgmt := newMgmt(false)
	var kmgmt *mgmtTable
	if l.ManagedByKind {
		kmgmt = newMgmt(true)
	}
	reread := func(e mgmtEntry) mgmtEntry {
		if e.raw != nil {
			return mgmtEntry{raw: e.raw, resolved: in.managed(e.raw)}
		}
		return e
	}
	if parent != nil {
		for _, e := range parent.rawMgmt {
			mgmt.put(reread(e))
		}
		if kmgmt != nil {
			for _, e := range parent.rawMgmtKinds {
				kmgmt.put(reread(e))
			}
		}
	}
	for _, d := range ownManaged(p, active) {
		d := d
		if strings.EqualFold(in.s(d.Scope), "import") {
			ic := Coord{in.s(d.GroupID), in.s(d.ArtifactID), in.s(d.Version)}
			if in.err != nil {
				return nil, in.err
			}
			ic = l.resolve(ctx, ic)
			bom, err := l.load(ctx, ic, stack)
			if err != nil {
				return nil, fmt.Errorf("impossible to import module %s: %w", ic, err)
			}
			for _, e := range bom.Managed {
				e := e
				mgmt.put(mgmtEntry{resolved: Managed{Group: e.Group, Artifact: e.Artifact, Version: e.Version, Scope: e.Scope, Exclusions: e.Exclusions}})
			}
			if kmgmt != nil {
				// Ivy 2.6.0 imports every entry of the BOM, with its type
				// and classifier.
				for _, e := range bom.rawMgmtKinds {
					kmgmt.put(mgmtEntry{resolved: e.resolved})
				}
			}
			continue
		}
		e := mgmtEntry{raw: &d, resolved: in.managed(&d)}
		mgmt.put(e)
		if kmgmt != nil {
			kmgmt.put(e)
		}
	}
	m.rawMgmt = mgmt.list()
	if kmgmt != nil {
		m.rawMgmtKinds = kmgmt.list()
	}
	for _, e := range m.rawMgmt {
		m.Managed = append(m.Managed, e.resolved)
	}

	// Dependencies: ours, then the parent's (re-read with our properties).
	m.rawDeps = append(m.rawDeps, ownDeps(p, active)...)
	if parent != nil {
		m.rawDeps = append(m.rawDeps, parent.rawDeps...)
	}
	for i := range m.rawDeps {
		if d, ok := in.dependency(&m.rawDeps[i], m, mgmt, kmgmt); ok {
			if err := d.check(); err != nil && in.err == nil {
				in.err = err
			}
			m.Dependencies = append(m.Dependencies, d)
		}
	}
	return m, in.err
}

// ManagedVersion is the version dependencyManagement gives group:artifact.
func (m *Model) ManagedVersion(group, artifact string) (string, bool) {
	m.once.Do(func() {
		m.managedIdx = map[[2]string]string{}
		for _, e := range m.Managed {
			m.managedIdx[[2]string{e.Group, e.Artifact}] = e.Version
		}
	})
	v, ok := m.managedIdx[[2]string{group, artifact}]
	return v, ok
}

func (m *Model) propertyMap() map[string]string {
	// The nearest definition wins (oracle-verified: a parent's property
	// beats the grandparent's).
	out := map[string]string{}
	for _, kv := range m.props {
		if _, ok := out[kv[0]]; !ok {
			out[kv[0]] = kv[1]
		}
	}
	return out
}

// mgmtTable is a dependencyManagement keyed by groupId:artifactId (Ivy
// 2.5), or with byKind by groupId:artifactId:type:classifier (Ivy 2.6.0's
// DependencyMgtKey: an empty type is jar). A later entry of a key replaces
// the earlier one in its place.
type mgmtTable struct {
	byKind bool
	order  []string
	byKey  map[string]mgmtEntry
}

func newMgmt(byKind bool) *mgmtTable {
	return &mgmtTable{byKind: byKind, byKey: map[string]mgmtEntry{}}
}

func (t *mgmtTable) key(g, a, typ, classifier string) string {
	if !t.byKind {
		return g + ":" + a
	}
	if typ == "" {
		typ = "jar"
	}
	return g + ":" + a + ":" + typ + ":" + classifier
}

func (t *mgmtTable) put(e mgmtEntry) {
	k := t.key(e.resolved.Group, e.resolved.Artifact, e.resolved.Type, e.resolved.Classifier)
	if _, ok := t.byKey[k]; !ok {
		t.order = append(t.order, k)
	}
	t.byKey[k] = e
}

// get is the entry managing a dependency g:a of type typ and classifier.
func (t *mgmtTable) get(g, a, typ, classifier string) (Managed, bool) {
	e, ok := t.byKey[t.key(g, a, typ, classifier)]
	return e.resolved, ok
}

func (t *mgmtTable) list() []mgmtEntry {
	out := make([]mgmtEntry, 0, len(t.order))
	for _, k := range t.order {
		out = append(out, t.byKey[k])
	}
	return out
}

func (in *interp) exclusions(d *pomDependency) []Exclusion {
	var out []Exclusion
	for _, e := range d.Exclusions {
		g, a := in.s(e.GroupID), in.s(e.ArtifactID)
		if g == "" {
			g = "*"
		}
		if a == "" {
			a = "*"
		}
		out = append(out, Exclusion{g, a})
	}
	return out
}

func (in *interp) managed(d *pomDependency) Managed {
	return Managed{
		Group: in.s(d.GroupID), Artifact: in.s(d.ArtifactID), Version: in.s(d.Version),
		Scope: in.s(d.Scope), Type: in.s(d.Type), Classifier: in.s(d.Classifier), Exclusions: in.exclusions(d),
	}
}

var knownScopes = map[string]bool{"compile": true, "runtime": true, "provided": true, "test": true, "system": true}

// dependency is raw as Ivy reads it, managed by mgmt (Ivy 2.5) or, when
// not nil, by kmgmt (Ivy 2.6.0).
func (in *interp) dependency(raw *pomDependency, m *Model, mgmt, kmgmt *mgmtTable) (Dependency, bool) {
	d := Dependency{
		Group: in.s(raw.GroupID), Artifact: in.s(raw.ArtifactID), Version: in.s(raw.Version),
		Scope: in.s(raw.Scope), Classifier: in.s(raw.Classifier), Type: in.s(raw.Type),
		Optional:   strings.EqualFold(in.s(raw.Optional), "true"),
		Exclusions: in.exclusions(raw),
	}
	// Some POMs depend on themselves; Ivy drops that dependency.
	if d.Group == m.Group && d.Artifact == m.Artifact {
		return d, false
	}
	if kmgmt != nil {
		mgmt = kmgmt
	}
	mg, managed := mgmt.get(d.Group, d.Artifact, d.Type, d.Classifier)
	if d.Scope == "" {
		if managed {
			d.Scope = mg.Scope
		}
		if !knownScopes[d.Scope] {
			d.Scope = "compile"
		}
	} else if !knownScopes[d.Scope] {
		d.Scope = "compile" // unknown scope → compile
	}
	if d.Version == "" && managed {
		d.Version = mg.Version
	}
	if len(d.Exclusions) == 0 && managed {
		d.Exclusions = mg.Exclusions
	}
	var kept []Exclusion
	for _, e := range d.Exclusions {
		if e.Group == "*" && e.Artifact == "*" {
			d.NonTransitive = true
			continue
		}
		kept = append(kept, e)
	}
	d.Exclusions = kept
	return d, true
}
