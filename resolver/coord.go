package resolver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/maven"
)

// Coordinate is one --packages entry, parsed with Spark's rules.
type Coordinate struct{ Group, Artifact, Version string }

func (c Coordinate) String() string { return c.Group + ":" + c.Artifact + ":" + c.Version }

// javaSplitString is Java's String.split on a literal separator: trailing
// empty strings are dropped (a leading or inner empty one is kept).
func javaSplitString(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		// "".split(x) is [""] in Java; ":::".split(":") is [].
		if s == "" {
			return []string{""}
		}
		return nil
	}
	return parts
}

// ParseCoordinates parses a --packages value as Spark's
// extractMavenCoordinates does: split on ",", every "/" becomes ":", exactly
// three non-blank parts. Values are not trimmed. Errors carry
// errdefs.Invalid and Spark's wording.
func ParseCoordinates(value string) ([]Coordinate, error) {
	var out []Coordinate
	for _, p := range javaSplitString(value, ",") {
		c, err := parseCoordinate(p)
		if err != nil {
			return nil, err
		}
		// Spark takes any characters; prebake refuses those a path cannot
		// hold safely (exclusions are globs, never paths: not checked).
		if err := maven.CheckParts(c.Group, c.Artifact, c.Version); err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("coordinate %s: %w", maven.Quote(p), err))
		}
		out = append(out, c)
	}
	return out, nil
}

func parseCoordinate(p string) (Coordinate, error) {
	splits := javaSplitString(strings.ReplaceAll(p, "/", ":"), ":")
	if len(splits) != 3 {
		return Coordinate{}, errdefs.Errorf(errdefs.Invalid, "requirement failed: Provided Maven Coordinates must be in the form 'groupId:artifactId:version'. The coordinate provided is: %s", p)
	}
	for i, name := range []string{"groupId", "artifactId", "version"} {
		if strings.TrimSpace(splits[i]) == "" {
			return Coordinate{}, errdefs.Errorf(errdefs.Invalid, "requirement failed: The %s cannot be null or be whitespace. The %s provided is: %s (in coordinate %q)", name, name, splits[i], p)
		}
	}
	return Coordinate{splits[0], splits[1], splits[2]}, nil
}

// ExcludeRule is one module-level exclusion of the synthetic root module: a
// glob on groupId and artifactId (Ivy's GlobPatternMatcher, Jakarta ORO
// syntax: * ? [..] and \ escapes; the whole name must match).
type ExcludeRule struct {
	Group, Artifact string
	g, a            *regexp.Regexp
}

// Matches reports whether the rule excludes group:artifact.
func (r ExcludeRule) Matches(group, artifact string) bool {
	return r.g.MatchString(group) && r.a.MatchString(artifact)
}

func (r ExcludeRule) String() string { return r.Group + ":" + r.Artifact }

func newExcludeRule(group, artifact string) (ExcludeRule, error) {
	g, err := globRegexp(group)
	if err != nil {
		return ExcludeRule{}, err
	}
	a, err := globRegexp(artifact)
	if err != nil {
		return ExcludeRule{}, err
	}
	return ExcludeRule{Group: group, Artifact: artifact, g: g, a: a}, nil
}

// globRegexp compiles an ORO glob into an anchored regexp.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(string(glob[i])))
			} else {
				b.WriteString(`\\`)
			}
		case '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				return nil, fmt.Errorf("glob %q: unterminated [", glob)
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", glob, err)
	}
	return re, nil
}

// sparkDefaultExcludes are the exclusions Spark adds to the root module
// (identical in 3.1 through 4.x).
var sparkDefaultExcludes = func() []string {
	out := []string{"*:scala-library"}
	for _, c := range []string{"catalyst_", "core_", "graphx_", "kvstore_", "launcher_", "mllib_", "mllib-local_",
		"network-common_", "network-shuffle_", "repl_", "sketch_", "sql_", "streaming_", "tags_", "unsafe_"} {
		out = append(out, "org.apache.spark:spark-"+c+"*")
	}
	return out
}()

// ParseExcludes parses --exclude-packages values as Spark does: each
// comma-separated g:a becomes the coordinate "g:a:*" (so it must have
// exactly two parts). Spark's default exclusions come first.
func ParseExcludes(values []string) ([]ExcludeRule, error) {
	var rules []ExcludeRule
	for _, d := range sparkDefaultExcludes {
		i := strings.IndexByte(d, ':')
		r, err := newExcludeRule(d[:i], d[i+1:])
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			continue
		}
		for _, e := range javaSplitString(v, ",") {
			c, err := parseCoordinate(e + ":*")
			if err != nil {
				return nil, errdefs.Optionf(errdefs.Invalid, "resolver.Request.Excludes", "exclude %q: %w", e, err)
			}
			r, err := newExcludeRule(c.Group, c.Artifact)
			if err != nil {
				return nil, errdefs.Optionf(errdefs.Invalid, "resolver.Request.Excludes", "exclude %q: %w", e, err)
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}
