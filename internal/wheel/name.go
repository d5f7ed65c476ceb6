package wheel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
)

// MaxTags bounds the tags a file name's compressed tag sets expand to (the
// product of the three sets); real wheels have a handful.
const MaxTags = 256

// A Tag is one (python, abi, platform) triple of PEP 425, lower case.
type Tag struct {
	Interpreter, ABI, Platform string
}

func (t Tag) String() string { return t.Interpreter + "-" + t.ABI + "-" + t.Platform }

// Name is a parsed wheel file name (PEP 427):
// {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl.
type Name struct {
	File         string // the file name as given
	Distribution string // as in the file name ("typing_extensions")
	Version      string
	Build        string // "" or a build tag starting with a digit
	Tags         []Tag  // the compressed tag sets expanded, in file-name order
}

// Project returns the distribution's normalized project name (PEP 503).
func (n Name) Project() string { return NormalizeProject(n.Distribution) }

// NormalizeProject returns the PEP 503 form of a project name: lower case,
// each run of "-", "_" and "." replaced by one "-".
func NormalizeProject(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			if !sep {
				b.WriteByte('-')
			}
			sep = true
			continue
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// ParseFilename parses a wheel file name. It refuses (errdefs.Invalid) a
// name that is not a bare file name (a path separator, "..", a control
// character, more than 255 bytes), a distribution, version or build tag
// holding characters a wheel name cannot hold, and tag sets expanding to
// more than MaxTags tags.
func ParseFilename(file string) (Name, error) {
	bad := func(format string, args ...any) (Name, error) {
		return Name{}, errdefs.Errorf(errdefs.Invalid, "wheel file name %q: %s", file, fmt.Sprintf(format, args...))
	}
	if err := safepath.Name(file); err != nil {
		return Name{}, errdefs.New(errdefs.Invalid, fmt.Errorf("wheel file name: %w", err))
	}
	if strings.Contains(file, "..") {
		return bad("holds %q", "..")
	}
	base, ok := strings.CutSuffix(file, ".whl")
	if !ok {
		return bad("does not end in .whl")
	}
	parts := strings.Split(base, "-")
	if len(parts) != 5 && len(parts) != 6 {
		return bad("want {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl")
	}
	n := Name{File: file, Distribution: parts[0], Version: parts[1]}
	if !nameChars(n.Distribution, "._") || !alnum(n.Distribution[0]) || !alnum(n.Distribution[len(n.Distribution)-1]) {
		return bad("distribution %q: want letters, digits, '.' and '_', starting and ending with a letter or digit", n.Distribution)
	}
	if !nameChars(n.Version, ".!+_") || !alnum(n.Version[0]) {
		return bad("version %q: want letters, digits, '.', '!', '+' and '_'", n.Version)
	}
	if len(parts) == 6 {
		n.Build = parts[2]
		if !nameChars(n.Build, "._") || n.Build[0] < '0' || n.Build[0] > '9' {
			return bad("build tag %q: want a digit first, then letters, digits, '.' and '_'", n.Build)
		}
	}
	var sets [3][]string
	count := 1
	for i, c := range parts[len(parts)-3:] {
		for _, t := range strings.Split(strings.ToLower(c), ".") {
			if !nameChars(t, "_") {
				return bad("tag %q: want letters, digits and '_'", c)
			}
			sets[i] = append(sets[i], t)
		}
		count *= len(sets[i])
	}
	if count > MaxTags {
		return bad("its tags expand to %d tags, more than %d", count, MaxTags)
	}
	for _, py := range sets[0] {
		for _, abi := range sets[1] {
			for _, plat := range sets[2] {
				n.Tags = append(n.Tags, Tag{py, abi, plat})
			}
		}
	}
	return n, nil
}

// nameChars reports whether s is not empty and holds only ASCII letters,
// digits and the bytes of extra.
func nameChars(s, extra string) bool {
	for i := range len(s) {
		if !alnum(s[i]) && !strings.ContainsRune(extra, rune(s[i])) {
			return false
		}
	}
	return s != ""
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

// buildLess orders build tags as PEP 427 does: no tag first, then by the
// leading number, then by the rest as a string.
func buildLess(a, b string) bool {
	an, ar := splitBuild(a)
	bn, br := splitBuild(b)
	if an != bn {
		return an < bn
	}
	return ar < br
}

func splitBuild(s string) (int64, string) {
	if s == "" {
		return -1, ""
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		n = 1<<63 - 1
	}
	return n, s[i:]
}
