package ivysettings

// spark.jars.ivySettings: an Ivy settings file, read as Spark reads it
// (SparkSubmitUtils.loadIvySettings, Ivy 2.5's XmlSettingsParser). The
// parser keeps what decides where modules come from: variables
// (<property>, <properties file|environment>, ${…}), <include>,
// <credentials>, <settings defaultResolver> and the resolvers ibiblio, url,
// filesystem and chain. Anything else that could change a resolution is an
// error naming the element (errdefs.Invalid), never ignored.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/javaprops"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/redact"
)

// Bounds on hostile settings files.
const (
	MaxFileSize        = 4 << 20  // one file
	maxIvyIncludes     = 32       // <include> and <properties file> in all
	MaxVarExpansion    = 64 << 10 // one value
	maxIvySettingsRead = 16 << 20 // the files of one load, in all
	// What expanding variables may cost one load in all, counted as Ivy
	// does the work (ivyExpansion): substitutions, and bytes built.
	MaxExpansionSteps    = 1 << 20
	maxIvyExpansionBytes = 16 << 20
	maxIvyResolvers      = 256
	MaxVariableDepth     = 32
	ivySettingsElemLimit = 100000
)

// Resolver is one resolver of a settings file.
type Resolver struct {
	Kind string // ibiblio, url, filesystem, chain
	Name string
	At   string // "file:line", for errors

	// ibiblio
	Root    string
	Pattern string
	UsePOMs bool
	// ibiblio, url, filesystem
	M2 bool
	// url, filesystem
	IvyPatterns, ArtifactPatterns []string
	// chain
	ReturnFirst, Dual bool
	Children          []*Resolver
}

// Credentials is a <credentials> element.
type Credentials struct {
	Realm, Host, User, Pass string
	At                      string
}

// Settings is a parsed settings file, a plain model: the resolvers by
// name, the default one and the credentials, with every variable
// substituted and every include read.
type Settings struct {
	// Path is the absolute path of the settings file.
	Path            string
	DefaultResolver string
	Resolvers       map[string]*Resolver
	Credentials     []Credentials
	// ConflictManager is <settings defaultConflictManager>: "" for Ivy's
	// default, latest-revision (Spark's), or ConflictNearest, Ivy 2.6.0's
	// Maven-style manager (IVY-813), which Ivy 2.5 does not know: the
	// resolver maps it to its nearest mode under Ivy 2.6.0 and refuses it
	// otherwise, naming ConflictAt.
	ConflictManager string
	// ConflictAt is where ConflictManager was set ("file:line").
	ConflictAt string
}

// ConflictNearest is the name of Ivy 2.6.0's nearest conflict manager
// (IvySettings registers it as "nearest").
const ConflictNearest = "nearest"

// parser is one load: the Settings it builds, and the variables, counts
// and budgets of the load.
type parser struct {
	*Settings
	vars      map[string]string
	envPrefix string
	includes  int
	elems     int
	LookupEnv func(string) (string, bool)

	// One load's context and budgets: what variable expansion has cost,
	// and the bytes of the files read.
	ctx    context.Context
	budget ivyExpansion
	read   int64
}

// ctxErr is the load's context error, a timeout (errdefs.Timeout) as for
// every interrupted operation.
func (s *parser) ctxErr() error {
	if err := s.ctx.Err(); err != nil {
		return errdefs.New(errdefs.Timeout, fmt.Errorf("reading Ivy settings %s: %w", redact.String(s.Path), err))
	}
	return nil
}

// Env is the JVM environment the settings' variables come from.
type Env struct {
	Home, User, Cwd string
	LookupEnv       func(string) (string, bool)
}

// Errorf is a settings file problem: errdefs.Invalid (errdefs.BadArgument
// for the scheme Spark refuses, errdefs.NotFound for a missing file),
// naming the file and the element.
func Errorf(kind errdefs.Kind, path, format string, args ...any) error {
	return errdefs.New(kind, fmt.Errorf("ivy settings %s: %s", redact.String(path), redact.String(fmt.Sprintf(format, args...))))
}

// Load parses spark.jars.ivySettings as Spark does: a file: URI or a
// scheme-less path; anything else is refused.
func Load(ctx context.Context, spec string, env Env) (*Settings, error) {
	p := spec
	if u, err := url.Parse(spec); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if !strings.EqualFold(u.Scheme, "file") {
			return nil, Errorf(errdefs.BadArgument, spec, "scheme %s is not supported in spark.jars.ivySettings (Spark accepts a file: URI or a path)", u.Scheme)
		}
		p = u.Path
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, Errorf(errdefs.BadArgument, spec, "%v", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, Errorf(errdefs.NotFound, spec, "Ivy settings file %s does not exist", abs)
	}
	if !st.Mode().IsRegular() {
		return nil, Errorf(errdefs.Invalid, spec, "Ivy settings file %s is not a normal file", abs)
	}
	s := &parser{Settings: &Settings{Path: abs, Resolvers: map[string]*Resolver{}}, vars: map[string]string{}, LookupEnv: env.LookupEnv, ctx: ctx}
	if s.LookupEnv == nil {
		s.LookupEnv = os.LookupEnv
	}
	// Java system properties Ivy exposes as variables (addSystemProperties),
	// then what IvySettings.load sets before parsing.
	for k, v := range map[string]string{
		"user.home": env.Home, "user.name": env.User, "user.dir": env.Cwd,
		"file.separator": "/", "path.separator": ":", "line.separator": "\n", "os.name": "Linux",
	} {
		s.vars[k] = v
	}
	s.vars["ivy.basedir"] = env.Cwd
	// ivy.home is read when the file is loaded: spark.jars.ivy is applied
	// afterwards (processIvyPathArg) and does not change it.
	ivyHome := filepath.Join(env.Home, ".ivy2")
	s.vars["ivy.home"] = ivyHome
	s.vars["ivy.default.ivy.user.dir"] = ivyHome
	s.setSettingsVars(s.vars, abs)
	// Ivy's own ivy.properties, without overriding.
	for _, kv := range [][2]string{
		{"ivy.project.dir", "${basedir}"},
		{"ivy.lib.dir", "${ivy.project.dir}/lib"},
		{"ivy.build.artifacts.dir", "${ivy.project.dir}/build/artifacts"},
		{"ivy.distrib.dir", "${ivy.project.dir}/distrib"},
		{"ivy.resolver.default.check.modified", "false"},
		{"ivy.default.always.check.exact.revision", "false"},
		{"ivy.configurations", "*"},
		{"ivy.resolve.default.type.filter", "*"},
		{"ivy.status", "integration"},
		{"ivy.dep.file", "ivy.xml"},
		{"ivy.settings.file", "ivysettings.xml"},
		{"ivy.checksums", "sha1,md5"},
		{"ivy.cache.ttl.default", "10s"},
	} {
		if _, set := s.vars[kv[0]]; !set {
			v, err := s.subst(kv[1])
			if err != nil {
				return nil, err
			}
			s.vars[kv[0]] = v
		}
	}
	if err := s.parse(abs, s.vars, ""); err != nil {
		return nil, err
	}
	return s.Settings, nil
}

// readFile reads a file of the load (the settings file, an include, a
// properties file): a regular file (never a FIFO or a device, which would
// hang or never end) of at most maxIvySettingsSize bytes, and
// maxIvySettingsRead for all of them. at is the element that names it
// ("" for the settings file).
func (s *parser) readFile(p, at string) ([]byte, error) {
	if at != "" {
		at += ": "
	}
	data, err := localfile.Read(p, MaxFileSize)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, Errorf(errdefs.Invalid, s.Path, "%s%v", at, err)
	}
	if s.read += int64(len(data)); s.read > maxIvySettingsRead {
		return nil, Errorf(errdefs.Invalid, s.Path, "%s%s: the settings file and its includes are larger than %d bytes in all", at, p, maxIvySettingsRead)
	}
	return data, nil
}

// isXMLSpace reports whether b is only XML white space.
func isXMLSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// setSettingsVars sets ivy.settings.dir/file/url for the file being read
// (IvySettings.setSettingsVariables).
func (s *parser) setSettingsVars(vars map[string]string, abs string) {
	vars["ivy.settings.dir"] = filepath.Dir(abs)
	vars["ivy.settings.file"] = abs
	vars["ivy.settings.url"] = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	vars["ivy.settings.dir.url"] = strings.TrimSuffix((&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Dir(abs))}).String(), "/") + "/"
	vars["ivy.conf.dir"] = vars["ivy.settings.dir"]
	vars["ivy.conf.file"] = abs
	vars["ivy.conf.url"] = vars["ivy.settings.url"]
}

// localSettingsVars are the variables an <include> keeps to itself
// (XmlSettingsParser.IvyVariableContainerWrapper).
var localSettingsVars = map[string]bool{
	"ivy.settings.dir": true, "ivy.settings.url": true, "ivy.settings.file": true,
	"ivy.conf.dir": true, "ivy.conf.url": true, "ivy.conf.file": true,
}

// lookup is a variable: the include's local settings variables, the
// environment through the <properties environment> prefix, then the rest.
func (s *parser) lookup(local map[string]string, name string) (string, bool) {
	if local != nil && localSettingsVars[name] {
		if v, ok := local[name]; ok {
			return v, true
		}
	}
	if s.envPrefix != "" && strings.HasPrefix(name, s.envPrefix) {
		if v, ok := s.LookupEnv(name[len(s.envPrefix):]); ok {
			return v, true
		}
	}
	v, ok := s.vars[name]
	return v, ok
}

// substLocal is IvyPatternHelper.substituteVariables: ${name} is replaced
// (recursively) when defined and left as written otherwise; a cycle or an
// expansion past maxIvyVarExpansion is an error.
//
// Ivy expands a stored value again at each use, so a value that names
// another one many times costs it exponential work (p4 = 100 × ${p3}, …:
// 10^8 expansions for an empty result). Within one call the variables do
// not change, so each is expanded once here (memo) and its cost is
// replayed: the load's budget (ivyExpansion) is charged what Ivy would do,
// and a file Ivy would take minutes or gigabytes on fails fast, in time
// linear in what is really built.
func (s *parser) substLocal(local map[string]string, v string) (string, error) {
	return s.substAt(local, v, "")
}

// substAt is substLocal for the value at (a property, an attribute), which
// a budget error names.
func (s *parser) substAt(local map[string]string, v, at string) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	x := &ivyExpander{s: s, local: local, At: at}
	return x.expand(v)
}

// ivyExpansion is the work of one settings load (the file and its
// includes), counted as Ivy would do it: each ${…} found is a step, each
// value built its bytes.
type ivyExpansion struct {
	steps, bytes int64
}

// ivyMemo is a variable expanded once: its value and what it cost.
type ivyMemo struct {
	val          string
	steps, bytes int64
	// height is how much deeper than the variable itself the expansion
	// nested (-1: it held no variable), so a later use deeper down meets
	// the same depth limit.
	height int
}

// ivyExpander is one substLocal call.
type ivyExpander struct {
	s     *parser
	local map[string]string
	At    string // what is expanded, for errors
	stack []string
	memo  map[string]ivyMemo
	// deepest is the deepest stack a value with variables was expanded
	// at, since the variable being expanded was pushed.
	deepest int
}

// charge adds to the load's budget and checks it (and the context, every
// 1024 steps).
func (x *ivyExpander) charge(steps, bytes int64) error {
	b := &x.s.budget
	before := b.steps
	b.steps += steps
	b.bytes += bytes
	if b.steps > MaxExpansionSteps || b.bytes > maxIvyExpansionBytes {
		at := x.At
		if len(x.stack) > 0 {
			at = strings.TrimPrefix(at+" ", " ") + "${" + x.stack[0] + "}"
		}
		if at != "" {
			at += ": "
		}
		what := fmt.Sprintf("%d substitutions", MaxExpansionSteps)
		if b.bytes > maxIvyExpansionBytes {
			what = fmt.Sprintf("%d bytes", maxIvyExpansionBytes)
		}
		return Errorf(errdefs.Invalid, x.s.Path, "%svariables expand past %s in all (the settings file and its includes; Ivy expands a value again at each use)", at, what)
	}
	if before>>10 != b.steps>>10 {
		return x.s.ctxErr()
	}
	return nil
}

// expand substitutes v's variables.
func (x *ivyExpander) expand(v string) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	if len(x.stack) > MaxVariableDepth {
		return "", x.tooDeep(x.stack)
	}
	x.deepest = max(x.deepest, len(x.stack))
	var out strings.Builder
	rest := v
	for {
		// The match of \$\{([^}]+)\}, leftmost first.
		i := strings.Index(rest, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i+2:], '}')
		if j < 0 {
			break // no match here nor further on
		}
		if j == 0 {
			out.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		out.WriteString(rest[:i])
		m := rest[i : i+2+j+1]
		rest = rest[i+2+j+1:]
		if err := x.charge(1, 0); err != nil {
			return "", err
		}
		r, err := x.variable(m[2 : len(m)-1])
		if err != nil {
			return "", err
		}
		if r == nil {
			out.WriteString(m)
		} else {
			out.WriteString(*r)
		}
		if out.Len() > MaxVarExpansion {
			return "", Errorf(errdefs.Invalid, x.s.Path, "a value expands past %d bytes", MaxVarExpansion)
		}
	}
	out.WriteString(rest)
	if out.Len() > MaxVarExpansion {
		return "", Errorf(errdefs.Invalid, x.s.Path, "a value expands past %d bytes", MaxVarExpansion)
	}
	if err := x.charge(0, int64(out.Len())); err != nil {
		return "", err
	}
	return out.String(), nil
}

// variable is the expanded value of the variable name, nil when it is not
// defined.
func (x *ivyExpander) variable(name string) (*string, error) {
	val, ok := x.s.lookup(x.local, name)
	if !ok {
		return nil, nil
	}
	for _, n := range x.stack {
		if n == name {
			return nil, Errorf(errdefs.Invalid, x.s.Path, "cyclic variable definition: %s → %s", strings.Join(x.stack, " → "), name)
		}
	}
	// Whether a variable's expansion meets a cycle does not depend on the
	// stack it is expanded under (a cycle through the stack passes through
	// the variable itself), so the value found once holds for every use.
	base := len(x.stack)
	if m, ok := x.memo[name]; ok {
		if m.height >= 0 && base+m.height > MaxVariableDepth {
			return nil, x.tooDeep(append(x.stack[:base:base], name))
		}
		if m.height >= 0 {
			x.deepest = max(x.deepest, base+m.height)
		}
		if err := x.charge(m.steps, m.bytes); err != nil {
			return nil, err
		}
		return &m.val, nil
	}
	steps, bytes, deepest := x.s.budget.steps, x.s.budget.bytes, x.deepest
	x.deepest = -1
	x.stack = append(x.stack, name)
	r, err := x.expand(val)
	x.stack = x.stack[:base]
	if err != nil {
		return nil, err
	}
	height := -1
	if x.deepest >= 0 {
		height = x.deepest - base
	}
	x.deepest = max(deepest, x.deepest)
	if x.memo == nil {
		x.memo = map[string]ivyMemo{}
	}
	x.memo[name] = ivyMemo{val: r, steps: x.s.budget.steps - steps, bytes: x.s.budget.bytes - bytes, height: height}
	return &r, nil
}

func (x *ivyExpander) tooDeep(stack []string) error {
	return Errorf(errdefs.Invalid, x.s.Path, "variables nested deeper than %d: %s", MaxVariableDepth, strings.Join(stack, " → "))
}

func (s *parser) subst(v string) (string, error) { return s.substLocal(nil, v) }

// setVar is IvySettings.setVariable with override, ifset and unlessset.
func (s *parser) setVar(local map[string]string, name, value string, override bool) error {
	v, err := s.substAt(local, value, "property "+name)
	if err != nil {
		return err
	}
	if local != nil && localSettingsVars[name] {
		if _, set := local[name]; !set || override {
			local[name] = v
		}
		return nil
	}
	if _, set := s.vars[name]; set && !override {
		return nil
	}
	s.vars[name] = v
	return nil
}

// element is a start tag with its attributes substituted.
type element struct {
	Name  string
	attrs map[string]string
	order []string
	At    string
}

func (e *element) get(k string) (string, bool) { v, ok := e.attrs[k]; return v, ok }

// boolAttr is Java's Boolean.valueOf: "true" in any case, else false; def
// when absent.
func (e *element) boolAttr(k string, def bool) bool {
	v, ok := e.attrs[k]
	if !ok {
		return def
	}
	return strings.EqualFold(v, "true")
}

// parse reads one file (the main one or an include) into s.
func (s *parser) parse(abs string, local map[string]string, at string) error {
	data, err := s.readFile(abs, at)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Errorf(errdefs.NotFound, s.Path, "%s does not exist", abs)
		}
		return err
	}
	// A UTF-8 byte order mark is no content (the JDK's parser skips it).
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		// encoding/xml refuses other encodings anyway; say so plainly.
		if !bytes.HasPrefix(data, []byte("<?xml")) {
			return Errorf(errdefs.Invalid, s.Path, "%s is not UTF-8", abs)
		}
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var stack []string
	var resolverStack []*Resolver // open resolver elements under <resolvers>
	var inPattern bool
	defaultResolver := ""
	skipDepth := 0 // inside an element whose children are ignored (<caches>, <timeout-constraints>, <lock-strategies>)
	roots := 0     // root elements seen
	malformed := func(why string) error {
		return Errorf(errdefs.Invalid, s.Path, "malformed XML in %s: %s", abs, why)
	}
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := s.ctxErr(); err != nil {
				return err
			}
		}
		startLine, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return malformed(err.Error())
		}
		line, _ := d.InputPos()
		at := fmt.Sprintf("%s:%d", filepath.Base(abs), line)
		switch t := tok.(type) {
		case xml.StartElement:
			s.elems++
			if s.elems > ivySettingsElemLimit {
				return Errorf(errdefs.Invalid, s.Path, "more than %d elements", ivySettingsElemLimit)
			}
			e := &element{Name: t.Name.Local, attrs: map[string]string{}, At: at}
			for _, a := range t.Attr {
				v, err := s.substAt(local, a.Value, fmt.Sprintf("%s: <%s %s>", at, t.Name.Local, a.Name.Local))
				if err != nil {
					return err
				}
				e.attrs[a.Name.Local] = v
				e.order = append(e.order, a.Name.Local)
			}
			stack = append(stack, e.Name)
			depth := len(stack)
			switch {
			case skipDepth > 0:
				// ignored subtree
			case depth == 1:
				if roots++; roots > 1 {
					// SAX: "The markup in the document following the root
					// element must be well-formed."
					return malformed(fmt.Sprintf("line %d: a second root element <%s>", line, e.Name))
				}
				if e.Name != "ivysettings" && e.Name != "ivyconf" {
					return Errorf(errdefs.Invalid, s.Path, "%s: root element <%s>, want <ivysettings>", at, e.Name)
				}
			case depth == 2:
				dr, skip, err := s.topLevel(e, local, abs)
				if err != nil {
					return err
				}
				if dr != "" {
					defaultResolver = dr
				}
				if skip {
					skipDepth = depth
				}
			case stack[1] == "resolvers":
				if inPattern {
					return Errorf(errdefs.Invalid, s.Path, "%s: <%s> inside a pattern element", at, e.Name)
				}
				var parent *Resolver
				if len(resolverStack) > 0 {
					parent = resolverStack[len(resolverStack)-1]
				}
				if parent != nil && (e.Name == "ivy" || e.Name == "artifact") {
					if err := s.patternElement(parent, e); err != nil {
						return err
					}
					inPattern = true
					resolverStack = append(resolverStack, nil)
					continue
				}
				if parent == nil && depth > 3 {
					return Errorf(errdefs.Invalid, s.Path, "%s: <%s> is not supported inside <%s>", at, e.Name, stack[depth-2])
				}
				r, err := s.resolverElement(e)
				if err != nil {
					return err
				}
				if parent != nil {
					if parent.Kind != "chain" {
						return Errorf(errdefs.Invalid, s.Path, "%s: <%s> inside <%s name=%q>: only a chain holds resolvers", at, e.Name, parent.Kind, parent.Name)
					}
					parent.Children = append(parent.Children, r)
				}
				if _, isRef := e.attrs["ref"]; isRef {
					resolverStack = append(resolverStack, &Resolver{Kind: "ref", Name: r.Name})
				} else {
					resolverStack = append(resolverStack, r)
				}
			default:
				return Errorf(errdefs.Invalid, s.Path, "%s: <%s> inside <%s> is not supported by prebake", at, e.Name, stack[depth-2])
			}
		case xml.EndElement:
			depth := len(stack)
			if skipDepth > 0 && depth == skipDepth {
				skipDepth = 0
			} else if skipDepth == 0 && depth > 2 && stack[1] == "resolvers" {
				top := resolverStack[len(resolverStack)-1]
				resolverStack = resolverStack[:len(resolverStack)-1]
				if top == nil {
					inPattern = false
				} else if top.Kind != "ref" && len(resolverStack) == 0 {
					if err := s.addResolver(top); err != nil {
						return err
					}
				} else if top.Kind != "ref" {
					if err := s.checkResolver(top); err != nil {
						return err
					}
				}
			}
			stack = stack[:depth-1]
		case xml.CharData:
			if len(stack) == 0 && !isXMLSpace(t) {
				// What SAX says of text outside the root element (a
				// passwd or key file included by mistake or on purpose).
				// The line is where the text starts; never the text.
				line := startLine + bytes.Count(t[:len(t)-len(bytes.TrimLeft(t, " \t\r\n"))], []byte("\n"))
				if roots == 0 {
					return malformed(fmt.Sprintf("line %d: content is not allowed in prolog", line))
				}
				return malformed(fmt.Sprintf("line %d: content is not allowed in trailing section", line))
			}
			if strings.TrimSpace(string(t)) != "" && len(stack) > 1 && skipDepth == 0 {
				return Errorf(errdefs.Invalid, s.Path, "%s: unexpected text in <%s>", at, stack[len(stack)-1])
			}
		}
	}
	if roots == 0 {
		return malformed("premature end of file: no root element")
	}
	if defaultResolver != "" {
		// endDocument substitutes it once more.
		v, err := s.substLocal(local, defaultResolver)
		if err != nil {
			return err
		}
		s.DefaultResolver = v
	}
	return nil
}

// topLevel handles a child of <ivysettings>; defaultResolver is returned
// to be applied at the end of the document, skip ignores the subtree.
func (s *parser) topLevel(e *element, local map[string]string, abs string) (defaultResolver string, skip bool, err error) {
	bad := func(format string, args ...any) error {
		return Errorf(errdefs.Invalid, s.Path, "%s: <%s>: %s", e.At, e.Name, fmt.Sprintf(format, args...))
	}
	switch e.Name {
	case "property":
		name, ok := e.get("name")
		if !ok {
			return "", false, bad("missing attribute name")
		}
		value, ok := e.get("value")
		if !ok {
			return "", false, bad("missing attribute value")
		}
		if err := s.onlyAttrs(e, "name", "value", "override", "ifset", "unlessset"); err != nil {
			return "", false, err
		}
		if v, ok := e.get("ifset"); ok {
			if _, set := s.lookup(local, v); !set {
				return "", false, nil
			}
		}
		if v, ok := e.get("unlessset"); ok {
			if _, set := s.lookup(local, v); set {
				return "", false, nil
			}
		}
		return "", false, s.setVar(local, name, value, e.boolAttr("override", true))
	case "properties":
		if err := s.onlyAttrs(e, "file", "environment", "override"); err != nil {
			return "", false, err
		}
		if f, ok := e.get("file"); ok {
			p, err := s.fileAttr(abs, f, e)
			if err != nil {
				return "", false, err
			}
			if s.includes++; s.includes > maxIvyIncludes {
				return "", false, bad("more than %d included files", maxIvyIncludes)
			}
			return "", false, s.loadProperties(p, local, e.boolAttr("override", true), e)
		}
		if pfx, ok := e.get("environment"); ok {
			if pfx != "" && !strings.HasSuffix(pfx, ".") {
				pfx += "."
			}
			s.envPrefix = pfx
			return "", false, nil
		}
		return "", false, bad("Didn't find a 'file' or 'environment' attribute")
	case "include":
		return "", false, s.include(e, local, abs)
	case "settings", "conf":
		for _, k := range e.order {
			v := e.attrs[k]
			switch k {
			case "defaultResolver":
				defaultResolver = v
			case "defaultConflictManager":
				// Spark's behaviour is latest-revision; Ivy 2.6.0's nearest
				// is recorded for the resolver (which knows the Ivy
				// version); other managers are not reproduced.
				switch v {
				case "latest-revision":
					s.ConflictManager, s.ConflictAt = "", ""
				case ConflictNearest:
					s.ConflictManager, s.ConflictAt = v, e.At
				default:
					return "", false, bad("%s=%q is not supported by prebake (latest-revision, or nearest with Ivy 2.6.0)", k, v)
				}
			case "defaultLatestStrategy":
				if v != "latest-revision" {
					return "", false, bad("%s=%q is not supported by prebake (only latest-revision)", k, v)
				}
			case "defaultCache", "defaultCacheIvyPattern", "defaultCacheArtifactPattern", "cacheIvyPattern", "cacheArtifactPattern",
				"checkUpToDate", "useRemoteConfig", "validate", "httpRequestMethod":
				// Where Ivy keeps its own cache and how it talks HTTP: no
				// effect on which jars are resolved.
			case "circularDependencyStrategy":
				if v != "warn" && v != "ignore" {
					return "", false, bad("%s=%q is not supported by prebake (warn or ignore)", k, v)
				}
			default:
				return "", false, bad("attribute %s is not supported by prebake", k)
			}
		}
		return defaultResolver, false, nil
	case "credentials":
		if err := s.onlyAttrs(e, "host", "realm", "username", "passwd"); err != nil {
			return "", false, err
		}
		if e.attrs["username"] == "" {
			return "", false, nil // CredentialsStore.addCredentials ignores it
		}
		if e.attrs["host"] == "" {
			return "", false, bad("no host")
		}
		s.Credentials = append(s.Credentials, Credentials{Realm: e.attrs["realm"], Host: e.attrs["host"], User: e.attrs["username"], Pass: e.attrs["passwd"], At: e.At})
		return "", false, nil
	case "resolvers":
		if err := s.onlyAttrs(e); err != nil {
			return "", false, err
		}
		return "", false, nil
	case "caches", "timeout-constraints", "lock-strategies":
		// Ivy's own cache, timeouts and locks: no effect on the result.
		return "", true, nil
	default:
		return "", false, bad("not supported by prebake (it reads property, properties, include, settings, credentials, resolvers, caches)")
	}
}

// onlyAttrs refuses attributes outside allowed.
func (s *parser) onlyAttrs(e *element, allowed ...string) error {
	for _, k := range e.order {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return Errorf(errdefs.Invalid, s.Path, "%s: <%s>: attribute %s is not supported by prebake", e.At, e.Name, k)
		}
	}
	return nil
}

// fileAttr is XmlSettingsParser.urlFromFileAttribute for a local file: a
// file: URL, an absolute path, or a path relative to the current file.
func (s *parser) fileAttr(abs, f string, e *element) (string, error) {
	if u, err := url.Parse(f); err == nil && len(u.Scheme) > 1 {
		if !strings.EqualFold(u.Scheme, "file") {
			return "", Errorf(errdefs.Invalid, s.Path, "%s: <%s> %q: only local files are read by prebake", e.At, e.Name, f)
		}
		if u.Host != "" && !strings.EqualFold(u.Hostname(), "localhost") {
			// Java opens file://host/path by FTP to host: not a local
			// file, and never read as one.
			return "", Errorf(errdefs.Invalid, s.Path, "%s: <%s> %q: a file: URL with host %s is not a local file (Java would fetch it by FTP); only local files are read by prebake", e.At, e.Name, f, u.Host)
		}
		return filepath.Clean(u.Path), nil
	}
	if filepath.IsAbs(f) {
		return filepath.Clean(f), nil
	}
	return filepath.Join(filepath.Dir(abs), f), nil
}

// include parses an included settings file; only ivy.settings.* stay
// local to it. optional="true" skips a missing file.
func (s *parser) include(e *element, local map[string]string, abs string) error {
	if err := s.onlyAttrs(e, "file", "url", "optional"); err != nil {
		return err
	}
	f, ok := e.get("file")
	if !ok {
		if f, ok = e.get("url"); !ok {
			return Errorf(errdefs.Invalid, s.Path, "%s: bad include tag: specify file or url to include", e.At)
		}
	}
	p, err := s.fileAttr(abs, f, e)
	if err != nil {
		return err
	}
	if s.includes++; s.includes > maxIvyIncludes {
		return Errorf(errdefs.Invalid, s.Path, "%s: more than %d included files", e.At, maxIvyIncludes)
	}
	if _, err := os.Stat(p); err != nil && e.boolAttr("optional", false) {
		return nil
	}
	sub := map[string]string{}
	s.setSettingsVars(sub, p)
	return s.parse(p, sub, e.At+": <include>")
}

// loadProperties reads a Java properties file (IvySettings.loadProperties).
// A missing file is skipped, as Ivy does (it logs at verbose level only).
func (s *parser) loadProperties(p string, local map[string]string, override bool, e *element) error {
	data, err := s.readFile(p, e.At+": <properties file>")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	entries, err := javaprops.Parse(data)
	if err != nil {
		return Errorf(errdefs.Invalid, s.Path, "%s: <properties file=%q>: %v", e.At, p, err)
	}
	// File order; Java's is a hash order (only values that refer to other
	// entries of the same file could differ).
	for _, kv := range entries {
		if err := s.setVar(local, kv.Key, kv.Value, override); err != nil {
			return err
		}
	}
	return nil
}

// Attributes of a resolver element prebake accepts without acting on
// them: they change Ivy's cache, timeouts or logging, not the result.
var ivyBenignAttrs = map[string]bool{
	"cache": true, "checkmodified": true, "changingPattern": true, "changingMatcher": true,
	"alwaysCheckExactRevision": true, "checksums": true, "useOrigin": true, "local": true,
	"transactional": true, "timeoutConstraint": true, "validate": true, "checkconsistency": true,
	"descriptor": true, "allownomd": true, "latest": true,
}

// refusedResolvers are the Ivy resolver types that do more than read
// files from a repository, each with why prebake refuses it. Like every
// type but ibiblio, url, filesystem and chain they are refused while the
// file is read, before any request; these say why.
var refusedResolvers = map[string]string{
	"packager": "it downloads packaging instructions and runs them as an Ant build under its buildRoot, " +
		"and a module coordinate with ../ escapes buildRoot (CVE-2026-26032, Ivy before 2.6.0); " +
		"prebake never builds or runs what a repository sends: resolve the packaged artifacts from an ibiblio or url repository",
	"ssh":  "it logs in to a host and runs commands there (ls, find) to list and fetch files; prebake reads repositories over http, https and file only",
	"sftp": "it logs in to a host with a password or private key; prebake reads repositories over http, https and file only",
	"vfs": "Commons VFS reaches any scheme it knows (ftp, smb, sftp, zip, jar, res, tmp), files inside archives among them; " +
		"prebake reads repositories over http, https and file only",
	"jar": "it reads a repository out of a jar it downloads or opens; prebake reads repositories over http, https and file only",
}

// resolverElement reads a resolver (or a ref="name" to one).
func (s *parser) resolverElement(e *element) (*Resolver, error) {
	bad := func(format string, args ...any) error {
		return Errorf(errdefs.Invalid, s.Path, "%s: <%s>: %s", e.At, e.Name, fmt.Sprintf(format, args...))
	}
	if ref, ok := e.get("ref"); ok {
		if len(e.attrs) != 1 {
			return nil, bad("ref attribute should be the only one")
		}
		r, ok := s.Resolvers[ref]
		if !ok {
			return nil, bad("unknown resolver %s: resolver should be defined before being referenced", ref)
		}
		return r, nil
	}
	r := &Resolver{Kind: e.Name, At: e.At, UsePOMs: true}
	var allowed []string
	switch e.Name {
	case "ibiblio":
		allowed = []string{"root", "pattern", "m2compatible", "usepoms", "useMavenMetadata"}
	case "url", "filesystem":
		allowed = []string{"m2compatible"}
	case "chain":
		allowed = []string{"returnFirst", "dual"}
	default:
		if why, ok := refusedResolvers[e.Name]; ok {
			return nil, bad("resolver type %s is refused by prebake: %s", e.Name, why)
		}
		return nil, bad("resolver type %s is not supported by prebake (ibiblio, url, filesystem, chain)", e.Name)
	}
	for _, k := range e.order {
		v := e.attrs[k]
		switch {
		case k == "name":
			r.Name = v
		case k == "root":
			r.Root = v
		case k == "pattern":
			r.Pattern = v
		case k == "m2compatible":
			r.M2 = strings.EqualFold(v, "true")
		case k == "usepoms":
			r.UsePOMs = strings.EqualFold(v, "true")
		case k == "returnFirst":
			r.ReturnFirst = strings.EqualFold(v, "true")
		case k == "dual":
			r.Dual = strings.EqualFold(v, "true")
		case k == "force" && !strings.EqualFold(v, "true"), k == "namespace" && v == "system":
		case k == "latest" && v != "latest-revision" && v != "default":
			return nil, bad("latest=%q is not supported by prebake (only latest-revision)", v)
		case k == "useMavenMetadata" && strings.EqualFold(v, "true"):
			// the default: dynamic revisions read maven-metadata.xml first
		case k == "descriptor" && v == "required", k == "allownomd" && !strings.EqualFold(v, "true"):
			// prebake always requires a POM: the same as Ivy then.
		case ivyBenignAttrs[k]:
		default:
			// The value is not quoted: it may be a secret (a passphrase).
			return nil, bad("attribute %s is not supported by prebake", k)
		}
		known := k == "name" || ivyBenignAttrs[k] || k == "force" || k == "namespace"
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			return nil, bad("attribute %s is not supported by prebake on <%s>", k, e.Name)
		}
	}
	if r.Name == "" {
		return nil, bad("no name")
	}
	return r, nil
}

// patternElement is an <ivy pattern> or <artifact pattern> of a url or
// filesystem resolver.
func (s *parser) patternElement(r *Resolver, e *element) error {
	if r.Kind != "url" && r.Kind != "filesystem" {
		return Errorf(errdefs.Invalid, s.Path, "%s: <%s> inside <%s name=%q>: patterns belong to url and filesystem resolvers", e.At, e.Name, r.Kind, r.Name)
	}
	if err := s.onlyAttrs(e, "pattern"); err != nil {
		return err
	}
	p, ok := e.get("pattern")
	if !ok || p == "" {
		return Errorf(errdefs.Invalid, s.Path, "%s: <%s>: no pattern", e.At, e.Name)
	}
	if e.Name == "ivy" {
		r.IvyPatterns = append(r.IvyPatterns, p)
	} else {
		r.ArtifactPatterns = append(r.ArtifactPatterns, p)
	}
	return nil
}

// checkResolver checks a complete resolver element.
func (s *parser) checkResolver(r *Resolver) error {
	switch r.Kind {
	case "url", "filesystem":
		if len(r.ArtifactPatterns) == 0 {
			return Errorf(errdefs.Invalid, s.Path, "%s: <%s name=%q>: no <artifact pattern>", r.At, r.Kind, r.Name)
		}
	case "chain":
		if len(r.Children) == 0 {
			return Errorf(errdefs.Invalid, s.Path, "%s: <chain name=%q> holds no resolver", r.At, r.Name)
		}
	}
	return nil
}

// addResolver registers a top-level resolver (IvySettings.addResolver:
// a later one of the same name replaces the earlier).
func (s *parser) addResolver(r *Resolver) error {
	if err := s.checkResolver(r); err != nil {
		return err
	}
	if len(s.Resolvers) >= maxIvyResolvers {
		return Errorf(errdefs.Invalid, s.Path, "%s: more than %d resolvers", r.At, maxIvyResolvers)
	}
	s.Resolvers[r.Name] = r
	// A chain's resolvers are registered too, and can be named by
	// defaultResolver or a ref.
	for _, c := range r.Children {
		if s.Resolvers[c.Name] != c {
			if err := s.addResolver(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// JVMEnv is the environment a JVM on this machine gives a settings file's
// variables: home as ${user.home}, the process's user, working directory
// and environment.
func JVMEnv(home string) Env {
	env := Env{Home: home, LookupEnv: os.LookupEnv}
	if u, err := user.Current(); err == nil {
		env.User = u.Username
	}
	env.Cwd, _ = os.Getwd()
	return env
}
