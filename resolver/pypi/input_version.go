package pypi

import "github.com/prebake/prebake/internal/pep440"

// Version is a PEP 440 version, normalized (internal/pep440, which the
// lock tooling shares).
type Version = pep440.Version

// ErrVersion is matched (errors.Is) by a string that is not a PEP 440
// version.
var ErrVersion = pep440.ErrVersion

// ParseVersion parses a PEP 440 version.
func ParseVersion(s string) (Version, error) { return pep440.Parse(s) }
