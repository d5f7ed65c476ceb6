package lock

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/wheel"
)

// PythonInputs are the inputs of the Python half: what was asked for and
// the target the wheels were chosen for (CPython is implied: PySpark's
// executors run it). Environment markers and Requires-Python were
// evaluated against this target when the lock was written, so a wheel
// entry records no markers. Index URLs never carry userinfo.
type PythonInputs struct {
	Indexes []string `json:"indexes"` // the package indexes (PEP 503 simple API), in order
	// Platforms are the target's platform tags, most specific first, e.g.
	// manylinux_2_17_x86_64, manylinux2014_x86_64.
	Platforms    []string `json:"platforms"`
	Requirements []string `json:"requirements"` // PEP 508 requirement strings, as given
	Version      string   `json:"version"`      // the target Python, major.minor, e.g. "3.11"
}

var (
	// pep440 is a normalized PEP 440 version.
	pep440 = regexp.MustCompile(`^(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?$`)
	// project is a PEP 503 normalized project name.
	project     = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	wheelTag    = regexp.MustCompile(`^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$`)
	pyVersion   = regexp.MustCompile(`^[0-9]{1,3}\.[0-9]{1,3}$`)
	maxInputLen = 1024
)

// NormalizeProject is PEP 503's normalized project name: lower case, runs
// of '-', '_' and '.' as one '-' (internal/wheel's, which installs them).
func NormalizeProject(name string) string { return wheel.NormalizeProject(name) }

// checkWheel checks a wheel entry: file is a PEP 427 wheel name whose
// distribution normalizes to name and whose version is version; name is a
// PEP 503 normalized name; version a normalized PEP 440 version;
// repository the index URL without userinfo; sha256 and size as a jar's;
// no jar field (coord, signedBy: signatures apply to jars only).
func checkWheel(a Artifact, bad func(format string, args ...any) error) error {
	w, err := wheel.ParseFilename(a.File)
	if err != nil {
		return bad("file: %v", err)
	}
	if a.Coord != "" {
		return bad("coord is a jar's field, not a wheel's (it has name and version)")
	}
	if a.SignedBy != "" {
		return bad("signedBy: signatures apply to jars only")
	}
	if !project.MatchString(a.Name) {
		return bad("name %s is not a PEP 503 normalized project name", coordpart.Quote(a.Name))
	}
	if NormalizeProject(w.Distribution) != a.Name {
		return bad("name %s is not the file's project (%s)", coordpart.Quote(a.Name), coordpart.Quote(NormalizeProject(w.Distribution)))
	}
	if !pep440.MatchString(a.Version) {
		return bad("version %s is not a normalized PEP 440 version", coordpart.Quote(a.Version))
	}
	if strings.ToLower(w.Version) != a.Version {
		return bad("version %s is not the file's (%s)", coordpart.Quote(a.Version), coordpart.Quote(w.Version))
	}
	if err := checkIndexURL(a.Repository); err != nil {
		return bad("repository: %v", err)
	}
	return checkContent(a, bad)
}

// checkIndexURL checks a package index URL: http, https or file, no
// userinfo, no control character.
func checkIndexURL(s string) error {
	if s == "" {
		return fmt.Errorf("empty")
	}
	if strings.ContainsFunc(s, isControl) {
		return fmt.Errorf("%s has a control character", coordpart.Quote(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s is not a URL", coordpart.Quote(s))
	}
	switch u.Scheme {
	case "http", "https", "file":
	default:
		return fmt.Errorf("%s is not an http, https or file URL", coordpart.Quote(s))
	}
	if u.User != nil {
		// The value is not echoed: it holds credentials.
		return fmt.Errorf("a URL with userinfo (a lock never records credentials)")
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkPythonInputs checks inputs.python. Errors name the field.
func checkPythonInputs(p PythonInputs) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: inputs.python.%s: %s", ErrBadLock, field, fmt.Sprintf(format, args...))
	}
	if !pyVersion.MatchString(p.Version) {
		return bad("version", "%s is not major.minor", coordpart.Quote(p.Version))
	}
	if len(p.Platforms) == 0 {
		return bad("platforms", "empty (the target's platform tags)")
	}
	for _, t := range p.Platforms {
		if !wheelTag.MatchString(t) {
			return bad("platforms", "%s is not a platform tag", coordpart.Quote(t))
		}
	}
	for _, r := range p.Requirements {
		if strings.TrimSpace(r) == "" || len(r) > maxInputLen || strings.ContainsFunc(r, isControl) {
			return bad("requirements", "%s is empty, longer than %d bytes or has a control character", coordpart.Quote(r), maxInputLen)
		}
	}
	for _, ix := range p.Indexes {
		if err := checkIndexURL(ix); err != nil {
			return bad("indexes", "%v", err)
		}
	}
	return nil
}

// Equal reports whether p and q are the same Python inputs (nil is only
// equal to nil).
func (p *PythonInputs) Equal(q *PythonInputs) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Version == q.Version && slices.Equal(p.Requirements, q.Requirements) &&
		slices.Equal(p.Indexes, q.Indexes) && slices.Equal(p.Platforms, q.Platforms)
}

// String is a short form for messages: "none", or the version, platforms
// and requirements (indexes left out: they may be long).
func (p *PythonInputs) String() string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("[python %s; platforms %s; requirements %s]", p.Version, strings.Join(p.Platforms, ","), strings.Join(p.Requirements, ","))
}
