package resolver

import (
	"regexp"
	"strings"

	"github.com/prebake/prebake/internal/revision"
)

// Ivy 2.5.1's default version matchers (a ChainVersionMatcher of
// SubVersionMatcher, LatestVersionMatcher, VersionRangeMatcher and
// ExactVersionMatcher), applied to the revisions of a module.

// Ivy's VersionRangeMatcher patterns: "[" and "]" open (inclusive and
// exclusive, "(" exclusive too), "]" "[" and ")" close, "(," and ",)" are
// the infinite bounds.
const (
	rangeAny   = `[^\s,\[\]\(\)]`
	rangeOpen  = `[\[\]\(]`
	rangeClose = `[\]\[\)]`
	rangeSep   = `\s*,\s*`
)

var (
	finiteRange = regexp.MustCompile(`^` + rangeOpen + `\s*(` + rangeAny + `+)` + rangeSep + `(` + rangeAny + `+)\s*` + rangeClose + `$`)
	lowerInf    = regexp.MustCompile(`^\(` + rangeSep + `(` + rangeAny + `+)\s*` + rangeClose + `$`)
	upperInf    = regexp.MustCompile(`^` + rangeOpen + `\s*(` + rangeAny + `+)` + rangeSep + `\)$`)
)

// NormalizeRevision is ModuleRevisionId.normalizeRevision: a Maven-style
// exact version "[1.0]" means "1.0".
func NormalizeRevision(rev string) string {
	if strings.HasPrefix(rev, "[") && strings.HasSuffix(rev, "]") && !strings.Contains(rev, ",") && rev != "[revision]" && len(rev) >= 2 {
		return rev[1 : len(rev)-1]
	}
	return rev
}

// IsDynamicRevision reports whether Ivy's version matcher treats rev as
// dynamic: "1.+", "latest.<status>" or a version range.
func IsDynamicRevision(rev string) bool {
	return strings.HasSuffix(rev, "+") || strings.HasPrefix(rev, "latest.") ||
		finiteRange.MatchString(rev) || lowerInf.MatchString(rev) || upperInf.MatchString(rev)
}

// MatchRevision is the version matcher's accept(asked, found) on revisions
// alone. latest.* accepts every revision here; see needsStatus.
func MatchRevision(asked, found string) bool {
	switch {
	case strings.HasSuffix(asked, "+"):
		return strings.HasPrefix(found, asked[:len(asked)-1])
	case strings.HasPrefix(asked, "latest."):
		return true
	}
	if m := finiteRange.FindStringSubmatch(asked); m != nil {
		return aboveLower(m[1], found, strings.HasPrefix(asked, "[")) && belowUpper(m[2], found, strings.HasSuffix(asked, "]"))
	}
	if m := lowerInf.FindStringSubmatch(asked); m != nil {
		return belowUpper(m[1], found, strings.HasSuffix(asked, "]"))
	}
	if m := upperInf.FindStringSubmatch(asked); m != nil {
		return aboveLower(m[1], found, strings.HasPrefix(asked, "["))
	}
	return asked == found
}

// rangeCompare is VersionRangeMatcher's comparator: 0 for equal strings,
// -1 when a is the later revision, else 1 (latest-revision's findLatest
// keeps the second of two equal revisions).
func rangeCompare(a, b string) int {
	if a == b {
		return 0
	}
	if revision.Compare(a, b) > 0 {
		return -1
	}
	return 1
}

func belowUpper(upper, found string, inclusive bool) bool {
	limit := -1
	if inclusive {
		limit = 0
	}
	return rangeCompare(upper, found) <= limit
}

func aboveLower(lower, found string, inclusive bool) bool {
	limit := 1
	if inclusive {
		limit = 0
	}
	return rangeCompare(lower, found) >= limit
}

// needsStatus is LatestVersionMatcher.needModuleDescriptor: every
// latest.<status> but the lowest status (latest.integration) checks the
// descriptor's status.
func needsStatus(asked string) bool {
	return strings.HasPrefix(asked, "latest.") && asked != "latest.integration"
}

// statusPriority is Ivy's default StatusManager: release, milestone,
// integration (a lower number is a higher status).
var statusPriority = map[string]int{"release": 0, "milestone": 1, "integration": 2}

// acceptStatus is LatestVersionMatcher.accept(asked, descriptor).
func acceptStatus(asked, status string) bool {
	want, ok := statusPriority[strings.TrimPrefix(asked, "latest.")]
	got, ok2 := statusPriority[status]
	return ok && ok2 && want >= got
}

// pomStatus is the status PomModuleDescriptorBuilder gives a POM.
func pomStatus(version string) string {
	if version == "" || strings.HasSuffix(version, "SNAPSHOT") {
		return "integration"
	}
	return "release"
}
