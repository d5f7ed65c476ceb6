// Package lockdiff compares two prebake lockfiles: which modules (jars by
// group:artifact[:classifier], wheels by "pypi/<project>") were added,
// removed, upgraded or downgraded, which changed content under the same
// version (a supply-chain red flag), which moved to another repository, and
// which inputs changed — the "why" of the module changes.
package lockdiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/pep440"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/lock"
)

// The kinds of change of a module, in the order they are listed in
// ModuleChange.Changes.
const (
	Added      = "added"      // only in the new lock
	Removed    = "removed"    // only in the old lock
	Upgrade    = "upgrade"    // newer version by Ivy's latest-revision order
	Downgrade  = "downgrade"  // older version by Ivy's latest-revision order
	Version    = "version"    // a different version string that Ivy orders as equal ("1.0" vs "1.0.0")
	Content    = "content"    // same version, different sha256 or size: a supply-chain red flag
	Repository = "repository" // served by another repository
	File       = "file"       // same module and version, another Spark file name
)

// Diff is the difference between two lockfiles. Its JSON form (stable, the
// lock diff document of docs/json-output.md):
//
//	{
//	  "equal": bool,                    // true iff inputs and artifacts are the same
//	  "old": {"path", "lockHash", "inputsHash"},
//	  "new": {"path", "lockHash", "inputsHash"},
//	  "inputsChanged": bool,
//	  "inputs": {
//	    "packages":     {"added": [..], "removed": [..], "reordered": bool},
//	    "repositories": {"added": [..], "removed": [..], "reordered": bool},
//	    "excludes":     {"added": [..], "removed": [..], "reordered": bool},
//	    "conflict":     {"old": "latest", "new": "strict"},  // omitted when equal
//	    "python": {                     // omitted when neither lock has inputs.python
//	      "requirements", "indexes", "platforms": {"added", "removed", "reordered"},
//	      "version": {"old", "new"}     // omitted when equal
//	    }
//	  },
//	  "why": "one sentence",
//	  "modules": [                      // sorted by module
//	    {"module": "g:a[:classifier]" or "pypi/<project>",
//	     "changes": ["upgrade", "repository", ...],   // kinds, see the constants
//	     "old": {"coord", "file", "repository", "sha256", "size"},   // omitted when added;
//	                                   // a wheel's: {"file", "kind", "name", "repository", "sha256", "size", "version"}
//	     "new": {...}}                                              // omitted when removed
//	  ],
//	  "summary": {"added", "removed", "upgraded", "downgraded", "versionChanged",
//	              "contentChanged", "repositoryChanged", "fileChanged": int}
//	}
//
// Lists are never null. Repositories are printed without credentials.
type Diff struct {
	Equal         bool           `json:"equal"`
	Old           LockRef        `json:"old"`
	New           LockRef        `json:"new"`
	InputsChanged bool           `json:"inputsChanged"`
	Inputs        InputsDiff     `json:"inputs"`
	Why           string         `json:"why"`
	Modules       []ModuleChange `json:"modules"`
	Summary       Summary        `json:"summary"`
}

// LockRef names one side of the diff.
type LockRef struct {
	Path       string `json:"path"`
	LockHash   string `json:"lockHash"`
	InputsHash string `json:"inputsHash"`
}

// InputsDiff is how the resolution inputs changed.
type InputsDiff struct {
	Packages     ListDiff     `json:"packages"`
	Repositories ListDiff     `json:"repositories"`
	Excludes     ListDiff     `json:"excludes"`
	Conflict     *ValueChange `json:"conflict,omitempty"`
	// Python is how inputs.python changed; nil when neither lock has it.
	Python *PythonDiff `json:"python,omitempty"`
}

// PythonDiff is how the Python half's inputs changed. A lock without
// inputs.python reads as empty lists and version "".
type PythonDiff struct {
	Requirements ListDiff     `json:"requirements"`
	Indexes      ListDiff     `json:"indexes"`
	Platforms    ListDiff     `json:"platforms"`
	Version      *ValueChange `json:"version,omitempty"`
}

// Changed reports whether the Python inputs differ at all.
func (d *PythonDiff) Changed() bool {
	return d != nil && (d.Requirements.Changed() || d.Indexes.Changed() || d.Platforms.Changed() || d.Version != nil)
}

func diffPython(o, n *lock.PythonInputs) *PythonDiff {
	if o == nil && n == nil {
		return nil
	}
	var empty lock.PythonInputs
	if o == nil {
		o = &empty
	}
	if n == nil {
		n = &empty
	}
	d := &PythonDiff{
		Requirements: diffList(o.Requirements, n.Requirements),
		Indexes:      diffList(redactAll(o.Indexes), redactAll(n.Indexes)),
		Platforms:    diffList(o.Platforms, n.Platforms),
	}
	if o.Version != n.Version {
		d.Version = &ValueChange{Old: o.Version, New: n.Version}
	}
	return d
}

// ListDiff is the difference of two ordered lists. Reordered is true when
// both hold the same elements in another order (order matters for packages
// and for the repository chain).
type ListDiff struct {
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Reordered bool     `json:"reordered"`
}

// Changed reports whether the lists differ at all.
func (d ListDiff) Changed() bool { return len(d.Added) > 0 || len(d.Removed) > 0 || d.Reordered }

// ValueChange is a scalar that changed.
type ValueChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// ModuleChange is one module that differs: a jar's group:artifact[:classifier]
// or a wheel's "pypi/<project>" (a jar's module never holds a '/').
type ModuleChange struct {
	Module  string         `json:"module"`
	Changes []string       `json:"changes"`
	Old     *lock.Artifact `json:"old,omitempty"`
	New     *lock.Artifact `json:"new,omitempty"`
}

// Has reports whether the change includes kind.
func (m ModuleChange) Has(kind string) bool { return slices.Contains(m.Changes, kind) }

// OldVersion and NewVersion are the versions of the two sides ("" when absent).
func (m ModuleChange) OldVersion() string { return versionOf(m.Old) }

// NewVersion is the version in the new lock ("" when removed).
func (m ModuleChange) NewVersion() string { return versionOf(m.New) }

func versionOf(a *lock.Artifact) string {
	if a == nil {
		return ""
	}
	if !a.IsJar() {
		return a.Version
	}
	c, _ := ParseCoord(a.Coord)
	return c.Version
}

// Summary counts the module changes by kind.
type Summary struct {
	Added             int `json:"added"`
	Removed           int `json:"removed"`
	Upgraded          int `json:"upgraded"`
	Downgraded        int `json:"downgraded"`
	VersionChanged    int `json:"versionChanged"`
	ContentChanged    int `json:"contentChanged"`
	RepositoryChanged int `json:"repositoryChanged"`
	FileChanged       int `json:"fileChanged"`
}

// Coord is a parsed lock coordinate g:a:v[:classifier].
type Coord struct{ Group, Artifact, Version, Classifier string }

// Module is group:artifact[:classifier], the identity a diff compares by.
func (c Coord) Module() string {
	m := c.Group + ":" + c.Artifact
	if c.Classifier != "" {
		m += ":" + c.Classifier
	}
	return m
}

// ParseCoord parses a lock coordinate g:a:v[:classifier]. Errors carry
// errdefs.Invalid.
func ParseCoord(s string) (Coord, error) {
	p := strings.Split(s, ":")
	if len(p) != 3 && len(p) != 4 {
		return Coord{}, errdefs.Errorf(errdefs.Invalid, "coordinate %q: want group:artifact:version[:classifier]", s)
	}
	for _, x := range p {
		if strings.TrimSpace(x) == "" {
			return Coord{}, errdefs.Errorf(errdefs.Invalid, "coordinate %q: empty part", s)
		}
	}
	c := Coord{Group: p[0], Artifact: p[1], Version: p[2]}
	if len(p) == 4 {
		c.Classifier = p[3]
	}
	return c, nil
}

// Compare returns the diff from old to new. oldName and newName label the
// sides (usually their paths). Errors (a malformed coordinate) carry
// errdefs.Invalid.
func Compare(oldName string, oldLock *lock.File, newName string, newLock *lock.File) (*Diff, error) {
	// Every kind: a jar by its coordinate, a wheel by its project name.
	oldArts, err := byModule(oldName, oldLock.Artifacts)
	if err != nil {
		return nil, err
	}
	newArts, err := byModule(newName, newLock.Artifacts)
	if err != nil {
		return nil, err
	}
	d := &Diff{
		Old: LockRef{Path: oldName, LockHash: oldLock.Hash(), InputsHash: lock.ComputeInputsHash(oldLock.Inputs)},
		New: LockRef{Path: newName, LockHash: newLock.Hash(), InputsHash: lock.ComputeInputsHash(newLock.Inputs)},
		Inputs: InputsDiff{
			Packages:     diffList(oldLock.Inputs.Packages, newLock.Inputs.Packages),
			Repositories: diffList(redactAll(oldLock.Inputs.Repositories), redactAll(newLock.Inputs.Repositories)),
			Excludes:     diffList(oldLock.Inputs.Excludes, newLock.Inputs.Excludes),
			Python:       diffPython(oldLock.Inputs.Python, newLock.Inputs.Python),
		},
		Modules: []ModuleChange{},
	}
	if oldLock.Inputs.Conflict != newLock.Inputs.Conflict {
		d.Inputs.Conflict = &ValueChange{Old: string(oldLock.Inputs.Conflict), New: string(newLock.Inputs.Conflict)}
	}
	d.InputsChanged = d.Inputs.Packages.Changed() || d.Inputs.Repositories.Changed() ||
		d.Inputs.Excludes.Changed() || d.Inputs.Conflict != nil || d.Inputs.Python.Changed()

	keys := make([]string, 0, len(oldArts)+len(newArts))
	for k := range oldArts {
		keys = append(keys, k)
	}
	for k := range newArts {
		if _, ok := oldArts[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		o, n := oldArts[k], newArts[k]
		if m, changed := compareModule(k, o, n); changed {
			d.Modules = append(d.Modules, m)
			d.Summary.add(m)
		}
	}
	d.Equal = !d.InputsChanged && len(d.Modules) == 0
	d.Why = why(d, setNoun(oldLock, newLock))
	return d, nil
}

// setNoun is what the locks' artifacts are called: "jars", or "artifacts"
// when either lock has a Python half.
func setNoun(a, b *lock.File) string {
	if a.HasPython() || b.HasPython() {
		return "artifacts"
	}
	return "jars"
}

type entry struct {
	module, version string
	art             lock.Artifact
}

// wheelModule is a wheel's module: its project under "pypi/".
func wheelModule(project string) string { return "pypi/" + project }

// byModule indexes artifacts by module. A module listed twice in one lock
// (not something a resolution produces) is keyed by its full coordinate
// (a wheel: module==version) so that nothing is lost.
func byModule(name string, arts []lock.Artifact) (map[string]*entry, error) {
	count := map[string]int{}
	parsed := make([]entry, len(arts))
	full := make([]string, len(arts))
	for i, a := range arts {
		a.Repository = redact.URL(a.Repository)
		if !a.IsJar() {
			parsed[i] = entry{module: wheelModule(a.Name), version: a.Version, art: a}
			full[i] = parsed[i].module + "==" + a.Version
			count[parsed[i].module]++
			continue
		}
		c, err := ParseCoord(a.Coord)
		if err != nil {
			return nil, fmt.Errorf("lockfile %s: artifact %q: %w", name, a.File, err)
		}
		parsed[i] = entry{module: c.Module(), version: c.Version, art: a}
		full[i] = a.Coord
		count[c.Module()]++
	}
	out := make(map[string]*entry, len(arts))
	for i := range parsed {
		e := &parsed[i]
		k := e.module
		if count[k] > 1 {
			k = full[i]
		}
		out[k] = e
	}
	return out, nil
}

// compareVersions orders two versions of one module: Ivy's
// latest-revision order for a jar, PEP 440's for a wheel.
func compareVersions(a lock.Artifact, o, n string) int {
	if !a.IsJar() {
		return pep440.Compare(o, n)
	}
	return revision.Compare(o, n)
}

func compareModule(module string, o, n *entry) (ModuleChange, bool) {
	m := ModuleChange{Module: module}
	switch {
	case o == nil:
		m.Changes = []string{Added}
		m.New = &n.art
		return m, true
	case n == nil:
		m.Changes = []string{Removed}
		m.Old = &o.art
		return m, true
	}
	m.Old, m.New = &o.art, &n.art
	if o.version != n.version {
		switch c := compareVersions(o.art, o.version, n.version); {
		case c < 0:
			m.Changes = append(m.Changes, Upgrade)
		case c > 0:
			m.Changes = append(m.Changes, Downgrade)
		default:
			m.Changes = append(m.Changes, Version)
		}
	} else if o.art.Sha256 != n.art.Sha256 || o.art.Size != n.art.Size {
		m.Changes = append(m.Changes, Content)
	}
	if o.art.Repository != n.art.Repository {
		m.Changes = append(m.Changes, Repository)
	}
	if o.version == n.version && o.art.File != n.art.File {
		m.Changes = append(m.Changes, File)
	}
	return m, len(m.Changes) > 0
}

func (s *Summary) add(m ModuleChange) {
	for _, k := range m.Changes {
		switch k {
		case Added:
			s.Added++
		case Removed:
			s.Removed++
		case Upgrade:
			s.Upgraded++
		case Downgrade:
			s.Downgraded++
		case Version:
			s.VersionChanged++
		case Content:
			s.ContentChanged++
		case Repository:
			s.RepositoryChanged++
		case File:
			s.FileChanged++
		}
	}
}

// diffList compares two ordered lists as sets, in each list's order, and
// notes a pure reordering.
func diffList(before, after []string) ListDiff {
	d := ListDiff{Added: []string{}, Removed: []string{}}
	for _, x := range after {
		if !slices.Contains(before, x) {
			d.Added = append(d.Added, x)
		}
	}
	for _, x := range before {
		if !slices.Contains(after, x) {
			d.Removed = append(d.Removed, x)
		}
	}
	if len(d.Added) == 0 && len(d.Removed) == 0 && !slices.Equal(before, after) {
		d.Reordered = true
	}
	return d
}

func redactAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = redact.URL(x)
	}
	return out
}

// ContentChanged returns the modules whose content changed under the same
// version: the red flags.
func (d *Diff) ContentChanged() []ModuleChange {
	var out []ModuleChange
	for _, m := range d.Modules {
		if m.Has(Content) {
			out = append(out, m)
		}
	}
	return out
}

func why(d *Diff, noun string) string {
	versions := d.Summary.Added + d.Summary.Removed + d.Summary.Upgraded + d.Summary.Downgraded + d.Summary.VersionChanged
	var s string
	switch {
	case d.Equal:
		return "The locks are identical: same inputs, same " + noun + "."
	case d.InputsChanged && len(d.Modules) == 0:
		s = "The inputs changed (" + changedInputs(d) + ") but resolve to the same " + noun + "."
	case d.InputsChanged && versions > 0:
		s = "The inputs changed (" + changedInputs(d) + "); the module changes follow from them."
	case d.InputsChanged:
		s = "The inputs changed (" + changedInputs(d) + "), but no module changed version; the other changes come from what the repositories serve."
	case versions > 0:
		s = "The inputs are identical, so the module changes come from the repositories' content changing (a new release within a version range or a dynamic version, a new SNAPSHOT, a POM republished, or a different repository or mirror serving it)."
	default:
		s = "The inputs are identical and the versions are the same; the repositories serve different files."
	}
	if n := d.Summary.ContentChanged; n > 0 {
		s += fmt.Sprintf(" WARNING: %d artifact(s) changed content under the same version: a supply-chain red flag; verify them before trusting the new lock.", n)
	}
	return s
}

func changedInputs(d *Diff) string {
	var parts []string
	if d.Inputs.Packages.Changed() {
		parts = append(parts, "packages")
	}
	if d.Inputs.Repositories.Changed() {
		parts = append(parts, "repositories")
	}
	if d.Inputs.Excludes.Changed() {
		parts = append(parts, "excludes")
	}
	if d.Inputs.Conflict != nil {
		parts = append(parts, "conflict")
	}
	if d.Inputs.Python.Changed() {
		parts = append(parts, "python")
	}
	return strings.Join(parts, ", ")
}
