package pypi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Env is the target environment markers are evaluated in (PEP 508's
// marker variables); the zero value of a field is "".
type Env struct {
	PythonVersion                string // "3.12"
	PythonFullVersion            string // "3.12.4"
	SysPlatform                  string // "linux"
	PlatformMachine              string // "x86_64"
	PlatformSystem               string // "Linux"
	PlatformRelease              string
	PlatformVersion              string
	PlatformPythonImplementation string // "CPython"
	ImplementationName           string // "cpython"
	ImplementationVersion        string // "3.12.4"
	OSName                       string // "posix"
	// Extras and DependencyGroups are PEP 751's sets, for pylock.toml's
	// markers ("'arrow' in extras").
	Extras           []string
	DependencyGroups []string
}

// LinuxEnv is a CPython on Linux of the given full version ("3.12.4") and
// machine ("x86_64", "aarch64"), the environment a Spark image runs.
func LinuxEnv(pythonFull, machine string) Env {
	short := pythonFull
	if i := strings.IndexByte(pythonFull, '.'); i >= 0 {
		if j := strings.IndexByte(pythonFull[i+1:], '.'); j >= 0 {
			short = pythonFull[:i+1+j]
		}
	}
	return Env{
		PythonVersion: short, PythonFullVersion: pythonFull,
		SysPlatform: "linux", PlatformMachine: machine, PlatformSystem: "Linux",
		PlatformPythonImplementation: "CPython", ImplementationName: "cpython",
		ImplementationVersion: pythonFull, OSName: "posix",
	}
}

// ErrMarker is matched (errors.Is) by a malformed marker or one that
// cannot be evaluated (an operator strings do not have).
var ErrMarker = errors.New("bad environment marker")

// A Marker is a parsed PEP 508 environment marker. The zero Marker holds
// everywhere.
type Marker struct{ root markerNode }

// String is the marker in a normal form (double quotes, single spaces).
func (m Marker) String() string {
	if m.root == nil {
		return ""
	}
	return m.root.String()
}

// MarshalText is the marker's normal form (String).
func (m Marker) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses a marker (ParseMarker).
func (m *Marker) UnmarshalText(b []byte) error {
	p, err := ParseMarker(string(b))
	if err != nil {
		return err
	}
	*m = p
	return nil
}

// IsZero reports a marker that holds everywhere (none was written).
func (m Marker) IsZero() bool { return m.root == nil }

// Evaluate reports whether the marker holds in env with extra (the extra
// being installed, "" for none; names compare normalized).
func (m Marker) Evaluate(env Env, extra string) (bool, error) {
	if m.root == nil {
		return true, nil
	}
	return m.root.eval(&env, CanonicalName(extra))
}

type markerNode interface {
	eval(env *Env, extra string) (bool, error)
	String() string
}

type markerBool struct {
	and   bool
	terms []markerNode
}

func (b markerBool) eval(env *Env, extra string) (bool, error) {
	for _, t := range b.terms {
		ok, err := t.eval(env, extra)
		if err != nil {
			return false, err
		}
		if ok != b.and {
			return ok, nil
		}
	}
	return b.and, nil
}

func (b markerBool) String() string {
	sep := " or "
	if b.and {
		sep = " and "
	}
	parts := make([]string, len(b.terms))
	for i, t := range b.terms {
		parts[i] = t.String()
		if inner, ok := t.(markerBool); ok && inner.and != b.and {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, sep)
}

// markerValue is a variable (Var) or a quoted string (Str).
type markerValue struct{ Var, Str string }

func (v markerValue) String() string {
	if v.Var != "" {
		return v.Var
	}
	if strings.Contains(v.Str, `"`) {
		return "'" + v.Str + "'"
	}
	return `"` + v.Str + `"`
}

type markerCmp struct {
	l, r markerValue
	op   string
}

func (c markerCmp) String() string { return c.l.String() + " " + c.op + " " + c.r.String() }

// markerVars maps every variable name (the legacy dotted ones included,
// as packaging accepts them) to its canonical name.
var markerVars = map[string]string{
	"python_version": "python_version", "python_full_version": "python_full_version",
	"sys_platform": "sys_platform", "sys.platform": "sys_platform",
	"platform_machine": "platform_machine", "platform.machine": "platform_machine",
	"platform_system": "platform_system", "platform_release": "platform_release",
	"platform_version": "platform_version", "platform.version": "platform_version",
	"platform_python_implementation": "platform_python_implementation",
	"platform.python_implementation": "platform_python_implementation",
	"python_implementation":          "platform_python_implementation",
	"implementation_name":            "implementation_name", "implementation_version": "implementation_version",
	"os_name": "os_name", "os.name": "os_name", "extra": "extra",
	"extras": "extras", "dependency_groups": "dependency_groups",
}

func (e *Env) lookup(name, extra string) (string, []string) {
	switch name {
	case "python_version":
		return e.PythonVersion, nil
	case "python_full_version":
		return e.PythonFullVersion, nil
	case "sys_platform":
		return e.SysPlatform, nil
	case "platform_machine":
		return e.PlatformMachine, nil
	case "platform_system":
		return e.PlatformSystem, nil
	case "platform_release":
		return e.PlatformRelease, nil
	case "platform_version":
		return e.PlatformVersion, nil
	case "platform_python_implementation":
		return e.PlatformPythonImplementation, nil
	case "implementation_name":
		return e.ImplementationName, nil
	case "implementation_version":
		return e.ImplementationVersion, nil
	case "os_name":
		return e.OSName, nil
	case "extra":
		return extra, nil
	case "extras":
		return "", canonicalAll(e.Extras)
	case "dependency_groups":
		return "", canonicalAll(e.DependencyGroups)
	}
	return "", nil
}

func canonicalAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = CanonicalName(n)
	}
	return out
}

// markersRequiringVersion are the variables compared as PEP 440 versions
// (packaging's MARKERS_REQUIRING_VERSION).
var markersRequiringVersion = map[string]bool{
	"implementation_version": true, "platform_release": true,
	"python_full_version": true, "python_version": true,
}

// eval follows packaging's _eval_op: a variable that holds a version
// compares as PEP 440 when "op rhs" is a valid specifier (pre-releases
// included; a value that is not a version matches nothing); else as
// strings, where in and not in are substring tests, <= and >= are ==,
// and < and > never hold; ~= and === of strings fail. extra (and the
// extras sets) compare normalized names.
func (c markerCmp) eval(env *Env, extra string) (bool, error) {
	key := c.l.Var
	if key == "" {
		key = c.r.Var
	}
	l, lset := c.side(c.l, env, extra)
	r, rset := c.side(c.r, env, extra)
	if lset != nil || rset != nil {
		if rset == nil || lset != nil || (c.op != "in" && c.op != "not in") {
			return false, fmt.Errorf("%s: a set compares only as \"name\" in %s: %w", c, key, ErrMarker)
		}
		return slices.Contains(rset, CanonicalName(l)) == (c.op == "in"), nil
	}
	if markersRequiringVersion[key] {
		if sp, err := ParseSpecifier(c.op + r); err == nil {
			v, err := ParseVersion(l)
			return err == nil && sp.Contains(v), nil
		}
	}
	switch c.op {
	case "in":
		return strings.Contains(r, l), nil
	case "not in":
		return !strings.Contains(r, l), nil
	case "==", "<=", ">=":
		return l == r, nil
	case "!=":
		return l != r, nil
	case "<", ">":
		return false, nil
	}
	return false, fmt.Errorf("%s: %s cannot compare %q and %q: %w", c, c.op, l, r, ErrMarker)
}

func (c markerCmp) side(v markerValue, env *Env, extra string) (string, []string) {
	if v.Var == "" {
		if c.l.Var == "extra" || c.r.Var == "extra" {
			return CanonicalName(v.Str), nil
		}
		return v.Str, nil
	}
	s, set := env.lookup(v.Var, extra)
	if set == nil && (v.Var == "extras" || v.Var == "dependency_groups") {
		set = []string{}
	}
	return s, set
}

// ParseMarker parses a PEP 508 marker ("python_version < '3.12' and
// sys_platform == 'linux'"). An empty string gives the zero Marker.
func ParseMarker(s string) (Marker, error) {
	if strings.TrimSpace(s) == "" {
		return Marker{}, nil
	}
	p := &markerParser{src: s}
	n, err := p.or()
	if err == nil && p.next() != "" {
		err = fmt.Errorf("unexpected %q", p.tok)
	}
	if err != nil {
		return Marker{}, fmt.Errorf("%q: %v: %w", s, err, ErrMarker)
	}
	return Marker{root: n}, nil
}

type markerParser struct {
	src     string
	pos     int
	tok     string // the token peeked, "" at the end
	peeked  bool
	quoted  bool // tok was a quoted string
	lastErr error
	depth   int
}

// maxMarkerDepth bounds nested parentheses (hostile input).
const maxMarkerDepth = 32

func (p *markerParser) next() string {
	if p.peeked {
		return p.tok
	}
	p.peeked = true
	p.quoted = false
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = ""
		return ""
	}
	s := p.src[p.pos:]
	switch {
	case s[0] == '\'' || s[0] == '"':
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			p.lastErr = errors.New("an unterminated string")
			p.tok = ""
			p.pos = len(p.src)
			return ""
		}
		p.tok, p.quoted = s[1:1+end], true
		p.pos += end + 2
		return p.tok
	case s[0] == '(' || s[0] == ')':
		p.tok = s[:1]
	default:
		for _, op := range []string{"===", "==", "!=", "<=", ">=", "~=", "<", ">"} {
			if strings.HasPrefix(s, op) {
				p.tok = op
				p.pos += len(op)
				return p.tok
			}
		}
		n := 0
		for n < len(s) && (isNameByte(s[n]) || s[n] == '_' || s[n] == '.') {
			n++
		}
		if n == 0 {
			n = 1
		}
		p.tok = s[:n]
	}
	p.pos += len(p.tok)
	return p.tok
}

func (p *markerParser) take() string { t := p.next(); p.peeked = false; return t }

func (p *markerParser) or() (markerNode, error) {
	return p.bool(false)
}

func (p *markerParser) bool(and bool) (markerNode, error) {
	word := "or"
	sub := func() (markerNode, error) { return p.bool(true) }
	if and {
		word, sub = "and", p.expr
	}
	first, err := sub()
	if err != nil {
		return nil, err
	}
	terms := []markerNode{first}
	for p.next() == word && !p.quoted {
		p.take()
		t, err := sub()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return markerBool{and: and, terms: terms}, nil
}

func (p *markerParser) expr() (markerNode, error) {
	if p.next() == "(" && !p.quoted {
		p.take()
		if p.depth++; p.depth > maxMarkerDepth {
			return nil, fmt.Errorf("more than %d nested parentheses", maxMarkerDepth)
		}
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.take() != ")" || p.quoted {
			return nil, errors.New("a missing )")
		}
		p.depth--
		return n, nil
	}
	l, err := p.value()
	if err != nil {
		return nil, err
	}
	op := p.take()
	if p.quoted {
		return nil, fmt.Errorf("an operator expected before %q", op)
	}
	switch op {
	case "==", "!=", "<=", ">=", "<", ">", "~=", "===", "in":
	case "not":
		if p.take() != "in" || p.quoted {
			return nil, errors.New(`"not" without "in"`)
		}
		op = "not in"
	case "":
		return nil, errors.New("an operator expected at the end")
	default:
		return nil, fmt.Errorf("an unknown operator %q", op)
	}
	r, err := p.value()
	if err != nil {
		return nil, err
	}
	if l.Var == "" && r.Var == "" {
		return nil, fmt.Errorf("%s %s %s compares two strings, no variable", l, op, r)
	}
	return markerCmp{l: l, op: op, r: r}, nil
}

func (p *markerParser) value() (markerValue, error) {
	t := p.take()
	if p.quoted {
		return markerValue{Str: t}, nil
	}
	if p.lastErr != nil {
		return markerValue{}, p.lastErr
	}
	if t == "" {
		return markerValue{}, errors.New("a value expected at the end")
	}
	name, ok := markerVars[t]
	if !ok {
		return markerValue{}, fmt.Errorf("an unknown variable %q", t)
	}
	return markerValue{Var: name}, nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
