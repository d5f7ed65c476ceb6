package pypi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrRequirement is matched (errors.Is) by a malformed PEP 508
// requirement.
var ErrRequirement = errors.New("not a PEP 508 requirement")

// ParseRequirement parses a PEP 508 requirement by name ("requests[socks]
// >=2.31,<3; python_version >= '3.8'"). A URL requirement ("name @
// https://…") is refused: it is not lockable as wheels from an index.
// The result has no Origin.
func ParseRequirement(s string) (Requirement, error) {
	rest := strings.TrimSpace(s)
	n := 0
	for n < len(rest) && (isNameByte(rest[n]) || rest[n] == '.' || rest[n] == '-' || rest[n] == '_') {
		n++
	}
	name := rest[:n]
	if !nameRE.MatchString(name) {
		return Requirement{}, fmt.Errorf("%q: no project name: %w", s, ErrRequirement)
	}
	r := Requirement{Name: CanonicalName(name)}
	rest = strings.TrimSpace(rest[n:])
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return Requirement{}, fmt.Errorf("%q: an unclosed [: %w", s, ErrRequirement)
		}
		for e := range strings.SplitSeq(rest[1:end], ",") {
			e = strings.TrimSpace(e)
			if e == "" && strings.TrimSpace(rest[1:end]) == "" {
				break
			}
			if !nameRE.MatchString(e) {
				return Requirement{}, fmt.Errorf("%q: a bad extra %q: %w", s, e, ErrRequirement)
			}
			r.Extras = append(r.Extras, CanonicalName(e))
		}
		slices.Sort(r.Extras)
		r.Extras = slices.Compact(r.Extras)
		rest = strings.TrimSpace(rest[end+1:])
	}
	if strings.HasPrefix(rest, "@") {
		return Requirement{}, fmt.Errorf("%s is a URL requirement (name @ URL): %w", r.Name, ErrNotWheel)
	}
	spec, marker, hasMarker := strings.Cut(rest, ";")
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "(") {
		if !strings.HasSuffix(spec, ")") {
			return Requirement{}, fmt.Errorf("%q: an unclosed (: %w", s, ErrRequirement)
		}
		spec = spec[1 : len(spec)-1]
	}
	var err error
	if r.Specifiers, err = ParseSpecifiers(spec); err != nil {
		return Requirement{}, fmt.Errorf("%s: %w", r.Name, err)
	}
	if hasMarker {
		if strings.TrimSpace(marker) == "" {
			return Requirement{}, fmt.Errorf("%q: an empty marker after ;: %w", s, ErrRequirement)
		}
		if r.Marker, err = ParseMarker(marker); err != nil {
			return Requirement{}, fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	return r, nil
}

// String is the requirement in PEP 508 form (hashes left out).
func (r Requirement) String() string {
	s := r.Name
	if len(r.Extras) > 0 {
		s += "[" + strings.Join(r.Extras, ",") + "]"
	}
	s += r.Specifiers.String()
	if !r.Marker.IsZero() {
		s += "; " + r.Marker.String()
	}
	return s
}
