// Package pep440 reads and orders Python package versions as PEP 440 and
// PyPA's packaging do: one implementation for the resolver (pins,
// specifiers) and the lock tooling (lock diff, outdated).
package pep440

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a PEP 440 version, normalized: "V1.0-RC.1" is 1.0rc1.
// Numbers are bounded by uint64; a longer one is refused (packaging takes
// any size), which no real release reaches.
type Version struct {
	Epoch   uint64
	Release []uint64
	// Pre is the pre-release: PreL is "a", "b" or "rc" ("" for none).
	PreL string
	PreN uint64
	// Post and Dev are set when HasPost or HasDev.
	HasPost bool
	Post    uint64
	HasDev  bool
	Dev     uint64
	// Local is the local label's segments ("ubuntu", "1"), lowercased,
	// nil for none.
	Local []string
}

// ErrVersion is matched (errors.Is) by a string that is not a PEP 440
// version.
var ErrVersion = errors.New("not a PEP 440 version")

// versionRE is PEP 440's VERSION_PATTERN (packaging's version.py), read,
// anchored and case-insensitive.
var versionRE = regexp.MustCompile(`(?i)^\s*v?` +
	`(?:(?P<epoch>[0-9]+)!)?` +
	`(?P<release>[0-9]+(?:\.[0-9]+)*)` +
	`(?:[-_.]?(?P<prel>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pren>[0-9]+)?)?` +
	`(?:(?:-(?P<postn1>[0-9]+))|(?:[-_.]?(?P<postl>post|rev|r)[-_.]?(?P<postn2>[0-9]+)?))?` +
	`(?:[-_.]?(?P<devl>dev)[-_.]?(?P<devn>[0-9]+)?)?` +
	`(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$`)

// Parse parses a PEP 440 version.
func Parse(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q: %w", s, ErrVersion)
	}
	g := func(name string) string { return m[versionRE.SubexpIndex(name)] }
	var v Version
	var err error
	num := func(s string) uint64 {
		if s == "" || err != nil {
			return 0
		}
		n, e := strconv.ParseUint(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("%q: a number is too large: %w", s, ErrVersion)
		}
		return n
	}
	v.Epoch = num(g("epoch"))
	for p := range strings.SplitSeq(g("release"), ".") {
		v.Release = append(v.Release, num(p))
	}
	if l := strings.ToLower(g("prel")); l != "" {
		switch l {
		case "alpha":
			l = "a"
		case "beta":
			l = "b"
		case "c", "pre", "preview":
			l = "rc"
		}
		v.PreL, v.PreN = l, num(g("pren"))
	}
	if g("postn1") != "" || g("postl") != "" {
		v.HasPost = true
		v.Post = num(g("postn1") + g("postn2"))
	}
	if g("devl") != "" {
		v.HasDev, v.Dev = true, num(g("devn"))
	}
	if l := g("local"); l != "" {
		v.Local = strings.FieldsFunc(strings.ToLower(l), func(r rune) bool { return r == '.' || r == '-' || r == '_' })
	}
	if err != nil {
		return Version{}, err
	}
	return v, nil
}

// String is the normalized form ("1!2.0rc1.post2.dev3+abc.5").
func (v Version) String() string {
	if len(v.Local) > 0 {
		return v.Public() + "+" + strings.Join(v.Local, ".")
	}
	return v.Public()
}

// Public is the version without its local label, normalized.
func (v Version) Public() string {
	var b strings.Builder
	if v.Epoch != 0 {
		fmt.Fprintf(&b, "%d!", v.Epoch)
	}
	for i, r := range v.Release {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatUint(r, 10))
	}
	if v.PreL != "" {
		fmt.Fprintf(&b, "%s%d", v.PreL, v.PreN)
	}
	if v.HasPost {
		fmt.Fprintf(&b, ".post%d", v.Post)
	}
	if v.HasDev {
		fmt.Fprintf(&b, ".dev%d", v.Dev)
	}
	return b.String()
}

// IsPrerelease reports a pre-release or a development release.
func (v Version) IsPrerelease() bool { return v.PreL != "" || v.HasDev }

// Base is the version's epoch and release only.
func (v Version) Base() Version { return Version{Epoch: v.Epoch, Release: v.Release} }

// WithoutLocal is the version without its local label.
func (v Version) WithoutLocal() Version { v.Local = nil; return v }

// Compare orders two version strings (see Version.Compare); a string that
// is not a PEP 440 version sorts by string order against the other (both
// unparsable: string order; one: after every version).
func Compare(a, b string) int {
	va, ea := Parse(a)
	vb, eb := Parse(b)
	switch {
	case ea == nil && eb == nil:
		return va.Compare(vb)
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return 1
	}
	return -1
}

// Compare orders versions as PEP 440 (and packaging's _cmpkey) does:
// epoch, release (trailing zeros ignored), then dev-only releases before
// pre-releases before the release before post-releases, then the local
// label (none first; numeric segments after alphanumeric ones).
func (v Version) Compare(w Version) int {
	if c := cmp.Compare(v.Epoch, w.Epoch); c != 0 {
		return c
	}
	for i := 0; i < max(len(v.Release), len(w.Release)); i++ {
		if c := cmp.Compare(releaseAt(v.Release, i), releaseAt(w.Release, i)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(v.preRank(), w.preRank()); c != 0 {
		return c
	}
	if v.PreL != "" && w.PreL != "" {
		if c := cmp.Compare(v.PreN, w.PreN); c != 0 {
			return c
		}
	}
	if c := cmpOpt(v.HasPost, v.Post, w.HasPost, w.Post, -1); c != 0 {
		return c
	}
	if c := cmpOpt(v.HasDev, v.Dev, w.HasDev, w.Dev, +1); c != 0 {
		return c
	}
	return cmpLocal(v.Local, w.Local)
}

// preRank: a dev release with neither pre nor post sorts before every
// pre-release (packaging's -Infinity), a final release after them.
func (v Version) preRank() int {
	switch {
	case v.PreL == "" && !v.HasPost && v.HasDev:
		return -1
	case v.PreL == "a":
		return 0
	case v.PreL == "b":
		return 1
	case v.PreL == "rc":
		return 2
	}
	return 3
}

// cmpOpt compares optional numbers; absent is below (-1) or above (+1)
// every present number.
func cmpOpt(ha bool, a uint64, hb bool, b uint64, absent int) int {
	switch {
	case ha && hb:
		return cmp.Compare(a, b)
	case ha == hb:
		return 0
	case !ha:
		return absent
	}
	return -absent
}

func cmpLocal(a, b []string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		na, ea := strconv.ParseUint(a[i], 10, 64)
		nb, eb := strconv.ParseUint(b[i], 10, 64)
		switch {
		case ea == nil && eb == nil:
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		case ea == nil:
			return 1
		case eb == nil:
			return -1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}

func releaseAt(r []uint64, i int) uint64 {
	if i < len(r) {
		return r[i]
	}
	return 0
}

// ReleaseAt is the i-th release segment, 0 past the last (1.2 is 1.2.0).
func (v Version) ReleaseAt(i int) uint64 { return releaseAt(v.Release, i) }
