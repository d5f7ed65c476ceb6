package pypi

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A Specifier is one PEP 440 version clause: Op is "==", "!=", "<=", ">=",
// "<", ">", "~=" or "===", Version its operand as written (trimmed;
// "1.2.*" for a prefix match).
type Specifier struct {
	Op      string
	Version string
}

// Specifiers is a comma-separated set of clauses, all of which must hold;
// none matches every version.
type Specifiers []Specifier

// ErrSpecifier is matched (errors.Is) by a malformed version specifier.
var ErrSpecifier = errors.New("not a PEP 440 version specifier")

var specOps = []string{"===", "==", "!=", "<=", ">=", "~=", "<", ">"}

// ParseSpecifiers parses "~=1.4, !=1.4.3" (empty gives none).
func ParseSpecifiers(s string) (Specifiers, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out Specifiers
	for part := range strings.SplitSeq(s, ",") {
		sp, err := ParseSpecifier(part)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// ParseSpecifier parses one clause, checking what PEP 440 allows each
// operator: a prefix match ("==1.2.*") only with == and !=, a local label
// only with == and !=, and ~= with two release segments at least.
func ParseSpecifier(s string) (Specifier, error) {
	t := strings.TrimSpace(s)
	for _, op := range specOps {
		if !strings.HasPrefix(t, op) {
			continue
		}
		sp := Specifier{Op: op, Version: strings.TrimSpace(t[len(op):])}
		if err := sp.check(); err != nil {
			return Specifier{}, fmt.Errorf("%q: %w", t, err)
		}
		return sp, nil
	}
	return Specifier{}, fmt.Errorf("%q: no operator: %w", t, ErrSpecifier)
}

// arbitraryRE is what === compares: any run without spaces, commas,
// semicolons or parentheses.
var arbitraryRE = regexp.MustCompile(`^[^\s;),]+$`)

func (sp Specifier) check() error {
	if sp.Op == "===" {
		if !arbitraryRE.MatchString(sp.Version) {
			return ErrSpecifier
		}
		return nil
	}
	vs, wild := strings.CutSuffix(sp.Version, ".*")
	if strings.ContainsAny(vs, " \t") {
		return ErrSpecifier
	}
	v, err := ParseVersion(vs)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSpecifier, err)
	}
	switch {
	case wild && sp.Op != "==" && sp.Op != "!=":
		return fmt.Errorf("a prefix match (.*) only with == or !=: %w", ErrSpecifier)
	case wild && (len(v.Local) > 0 || v.IsPrerelease() || v.HasPost):
		return fmt.Errorf("a prefix match (.*) of a release only: %w", ErrSpecifier)
	case len(v.Local) > 0 && sp.Op != "==" && sp.Op != "!=":
		return fmt.Errorf("a local version label only with == or !=: %w", ErrSpecifier)
	case sp.Op == "~=" && len(v.Release) < 2:
		return fmt.Errorf("~= needs two release segments at least: %w", ErrSpecifier)
	}
	return nil
}

// String is the clause as "op version".
func (sp Specifier) String() string { return sp.Op + sp.Version }

// String joins the clauses with commas.
func (ss Specifiers) String() string {
	parts := make([]string, len(ss))
	for i, sp := range ss {
		parts[i] = sp.String()
	}
	return strings.Join(parts, ",")
}

// Contains reports whether v satisfies every clause. A pre-release (or
// dev release) matches only when pre is true or a clause names a
// pre-release itself, as packaging's SpecifierSet.contains does.
func (ss Specifiers) Contains(v Version, pre bool) bool {
	if v.IsPrerelease() && !pre && !ss.namesPrerelease() {
		return false
	}
	for _, sp := range ss {
		if !sp.Contains(v) {
			return false
		}
	}
	return true
}

func (ss Specifiers) namesPrerelease() bool {
	return slices.ContainsFunc(ss, func(sp Specifier) bool {
		if sp.Op == "!=" || sp.Op == "===" {
			return false
		}
		v, err := ParseVersion(strings.TrimSuffix(sp.Version, ".*"))
		return err == nil && v.IsPrerelease()
	})
}

// Pinned returns the version an "==V" clause (no prefix match) pins, as
// the only clause of ss.
func (ss Specifiers) Pinned() (Version, bool) {
	if len(ss) != 1 || (ss[0].Op != "==" && ss[0].Op != "===") || strings.HasSuffix(ss[0].Version, ".*") {
		return Version{}, false
	}
	v, err := ParseVersion(ss[0].Version)
	return v, err == nil
}

// Contains reports whether v satisfies the clause (pre-releases
// included), with packaging's rules: < excludes the pre-releases of its
// own version, > its post-releases and local versions unless it names
// them, and only == and != with a local label compare labels.
func (sp Specifier) Contains(v Version) bool {
	if sp.Op == "===" {
		return strings.EqualFold(v.String(), sp.Version)
	}
	vs, wild := strings.CutSuffix(sp.Version, ".*")
	s, err := ParseVersion(vs)
	if err != nil {
		return false
	}
	switch sp.Op {
	case "==":
		return versionEqual(v, s, wild)
	case "!=":
		return !versionEqual(v, s, wild)
	case "<=":
		return v.WithoutLocal().Compare(s) <= 0
	case ">=":
		return v.WithoutLocal().Compare(s) >= 0
	case "<":
		if v.Compare(s) >= 0 {
			return false
		}
		return s.IsPrerelease() || !v.IsPrerelease() || v.Base().Compare(s.Base()) != 0
	case ">":
		if v.Compare(s) <= 0 {
			return false
		}
		if !s.HasPost && v.HasPost && v.Base().Compare(s.Base()) == 0 {
			return false
		}
		return len(v.Local) == 0 || v.Base().Compare(s.Base()) != 0
	case "~=":
		prefix := s.Base()
		prefix.Release = prefix.Release[:len(prefix.Release)-1]
		return v.WithoutLocal().Compare(s) >= 0 && versionEqual(v, prefix, true)
	}
	return false
}

// versionEqual is ==. A prefix match ("1.2.*") compares v's epoch and
// leading release segments with s's, v's release padded with zeros, so
// 1.2rc1, 1.2.post1 and 1.2.3 all match (packaging's _version_split and
// _pad_version); otherwise v's local label counts only when s has one.
func versionEqual(v, s Version, wild bool) bool {
	if !wild {
		if len(s.Local) == 0 {
			v = v.WithoutLocal()
		}
		return v.Compare(s) == 0
	}
	if v.Epoch != s.Epoch {
		return false
	}
	for i, r := range s.Release {
		if v.ReleaseAt(i) != r {
			return false
		}
	}
	return true
}
