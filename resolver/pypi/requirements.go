package pypi

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// ReadRequirements reads a requirements file in pip's format: PEP 508
// requirements with --hash options, comments, \ continuations, ${VAR}
// expansion, -r/-c includes (relative to the including file; a cycle, a
// chain deeper than MaxIncludeDepth or more than MaxFiles files is an
// error) and index lines (recorded, not honoured: see the package
// comment). Editable, URL, path and VCS requirements are refused: they
// are not lockable as wheels. Every error names the file and line.
func ReadRequirements(ctx context.Context, path string, opts ...ReadOption) (*Input, error) {
	o, err := makeReadOptions(opts)
	if err != nil {
		return nil, err
	}
	r := &reqReader{ctx: ctx, o: o, in: &Input{Format: FormatRequirements, File: path}}
	if err := r.file(path, nil, false); err != nil {
		return nil, err
	}
	return r.in, nil
}

type reqReader struct {
	ctx   context.Context
	o     *readOptions
	in    *Input
	stack []string // the files being read, outermost first (identities)
	names []string // the same, as named
	files int
}

// fileIdentity is what makes two names one file (symbolic links followed).
func fileIdentity(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// file reads path, included from the line from (nil for the top file);
// constraint says its requirements are constraints (a -c file).
func (r *reqReader) file(path string, from *Origin, constraint bool) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	at := func(err error) error {
		if from == nil {
			return err
		}
		return lineError(*from, err)
	}
	if len(r.stack) >= MaxIncludeDepth {
		return at(fmt.Errorf("-r/-c includes nested deeper than %d", MaxIncludeDepth))
	}
	if r.files++; r.files > MaxFiles {
		return at(fmt.Errorf("more than %d files included", MaxFiles))
	}
	id := fileIdentity(path)
	if i := slices.Index(r.stack, id); i >= 0 {
		chain := strings.Join(append(slices.Clone(r.names[i:]), path), " → ")
		return at(fmt.Errorf("%s includes itself (%s)", path, chain))
	}
	data, err := readInputFile(path, r.o)
	if err != nil {
		return at(err)
	}
	if err := checkText(path, data); err != nil {
		return err
	}
	r.stack, r.names = append(r.stack, id), append(r.names, path)
	defer func() { r.stack, r.names = r.stack[:len(r.stack)-1], r.names[:len(r.names)-1] }()
	for ln := range logicalLines(strings.TrimPrefix(string(data), "\ufeff")) {
		line := strings.TrimSpace(commentRE.ReplaceAllString(ln.text, ""))
		if line == "" {
			continue
		}
		if err := r.line(Origin{File: path, Line: ln.no}, r.expand(line), constraint); err != nil {
			return err
		}
	}
	return nil
}

type logicalLine struct {
	no   int
	text string
}

// commentRE is pip's COMMENT_RE: a # at the start or after white space.
var commentRE = regexp.MustCompile(`(^|\s+)#.*$`)

// logicalLines joins the lines ending in \ with the next (pip's
// join_lines: a comment line never continues), numbered by their first
// line.
func logicalLines(text string) func(yield func(logicalLine) bool) {
	return func(yield func(logicalLine) bool) {
		var cont []string
		first := 0
		for i, l := range strings.Split(text, "\n") {
			l = strings.TrimSuffix(l, "\r")
			isComment := strings.HasPrefix(strings.TrimLeft(l, " \t"), "#")
			if !strings.HasSuffix(l, `\`) || isComment {
				if isComment {
					l = " " + l
				}
				if cont != nil {
					if !yield(logicalLine{first, strings.Join(append(cont, l), "")}) {
						return
					}
					cont = nil
					continue
				}
				if !yield(logicalLine{i + 1, l}) {
					return
				}
				continue
			}
			if cont == nil {
				first = i + 1
			}
			cont = append(cont, strings.TrimRight(strings.TrimLeft(l, `\`), `\`))
		}
		if cont != nil {
			yield(logicalLine{first, strings.Join(cont, "")})
		}
	}
}

// envRE is pip's ENV_VAR_RE: ${NAME} of upper-case letters, digits and _.
var envRE = regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`)

// expand replaces ${VAR} by its value, as pip does: an unset or empty
// variable is left as written.
func (r *reqReader) expand(line string) string {
	return envRE.ReplaceAllStringFunc(line, func(m string) string {
		if v, ok := r.o.getenv(m[2 : len(m)-1]); ok && v != "" {
			return v
		}
		return m
	})
}

// line handles one logical line: a requirement with its options, or a
// line of options.
func (r *reqReader) line(src Origin, line string, constraint bool) error {
	args, rest := breakArgsOptions(line)
	tokens, err := splitShell(rest)
	if err != nil {
		return lineError(src, err)
	}
	if args == "" {
		return r.options(src, tokens)
	}
	if looksLikeLocation(args) {
		return lineError(src, fmt.Errorf("%q is a URL, path or VCS requirement: %w (name the project and its version from an index)", redact.String(args), ErrNotWheel))
	}
	req, err := ParseRequirement(args)
	if err != nil {
		return lineError(src, err)
	}
	req.Origin = src
	for i := 0; i < len(tokens); {
		name, val, next, err := optionValue(tokens, i)
		if err != nil {
			return lineError(src, err)
		}
		i = next
		if name != "--hash" {
			return lineError(src, fmt.Errorf("option %s is not supported on a requirement line (only --hash)", name))
		}
		h, err := checkHash(val)
		if err != nil {
			return lineError(src, err)
		}
		req.Hashes = append(req.Hashes, h)
	}
	if constraint {
		if len(req.Extras) > 0 {
			return lineErrorf(src, "%s: a constraint cannot have extras", req.Name)
		}
		r.in.Constraints = append(r.in.Constraints, req)
		return nil
	}
	r.in.Requirements = append(r.in.Requirements, req)
	return nil
}

// options handles a line of options (no requirement).
func (r *reqReader) options(src Origin, tokens []string) error {
	for i := 0; i < len(tokens); {
		name, val, next, err := optionValue(tokens, i)
		if err != nil {
			return lineError(src, err)
		}
		i = next
		switch name {
		case "-r", "--requirement", "-c", "--constraint":
			if strings.Contains(val, "://") {
				return lineErrorf(src, "%s %s: files are included from the file system only", name, redact.URL(val))
			}
			p := val
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(src.File), p)
			}
			// As pip: -r in a constraints file includes requirements.
			if err := r.file(p, &src, name == "-c" || name == "--constraint"); err != nil {
				return err
			}
		case "-e", "--editable":
			return lineError(src, fmt.Errorf("an editable requirement (%s %s) is %w", name, redact.String(val), ErrNotWheel))
		case "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--no-index":
			long := map[string]string{"-i": "--index-url", "-f": "--find-links"}[name]
			if long == "" {
				long = name
			}
			r.in.Indexes = append(r.in.Indexes, IndexLine{Flag: long, URL: noUserinfo(val), Origin: src})
		case "--pre":
			r.in.Pre = true
		case "--require-hashes":
			r.in.RequireHashes = true
		case "--prefer-binary", "--only-binary", "--trusted-host", "--use-feature":
			// Wheels only, always; hosts are the machine's configuration.
		case "--no-binary":
			if val != ":none:" {
				return lineErrorf(src, "--no-binary %s asks for source builds: prebake locks wheels only", val)
			}
		case "--hash":
			return lineErrorf(src, "--hash with no requirement before it")
		default:
			return lineErrorf(src, "option %s is not supported in a requirements file", name)
		}
	}
	return nil
}

// takesValue lists the options that take a value.
var takesValue = map[string]bool{
	"-r": true, "--requirement": true, "-c": true, "--constraint": true, "-e": true, "--editable": true,
	"-i": true, "--index-url": true, "--extra-index-url": true, "-f": true, "--find-links": true,
	"--only-binary": true, "--no-binary": true, "--trusted-host": true, "--use-feature": true,
	"--hash": true, "--config-settings": true, "--global-option": true,
}

// optionValue reads the option at tokens[i] as optparse does: "-rFILE",
// "-r FILE", "--requirement=FILE" or "--requirement FILE".
func optionValue(tokens []string, i int) (name, val string, next int, err error) {
	t := tokens[i]
	if !strings.HasPrefix(t, "-") || t == "-" {
		return "", "", 0, fmt.Errorf("%q is not an option", t)
	}
	name = t
	inline, hasInline := "", false
	if strings.HasPrefix(t, "--") {
		name, inline, hasInline = strings.Cut(t, "=")
	} else if len(t) > 2 {
		name, inline, hasInline = t[:2], t[2:], true
	}
	if !takesValue[name] {
		if hasInline {
			return "", "", 0, fmt.Errorf("option %s takes no value", name)
		}
		return name, "", i + 1, nil
	}
	if hasInline {
		return name, inline, i + 1, nil
	}
	if i+1 >= len(tokens) {
		return "", "", 0, fmt.Errorf("option %s needs a value", name)
	}
	return name, tokens[i+1], i + 2, nil
}

// breakArgsOptions is pip's break_args_options: the words before the
// first one starting with "-" are the requirement, the rest options.
func breakArgsOptions(line string) (args, opts string) {
	words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	for i, w := range words {
		if strings.HasPrefix(w, "-") {
			return strings.Join(words[:i], " "), strings.Join(words[i:], " ")
		}
	}
	return strings.Join(words, " "), ""
}

// splitShell splits options as shlex.split does for what a requirements
// file holds: white space separates, quotes group, a backslash escapes
// outside single quotes.
func splitShell(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			cur.WriteByte(c)
			esc, in = false, true
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\\':
			esc = true
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("an unclosed quote (%c)", quote)
	}
	if in || esc {
		out = append(out, cur.String())
	}
	return out, nil
}

// archiveExts are the file names pip takes as archives (a path).
var archiveExts = []string{".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar", ".tar.lz"}

// nameAtRE is a PEP 508 URL requirement's start: "name[extras] @".
var nameAtRE = regexp.MustCompile(`^\s*[A-Za-z0-9._-]+\s*(\[[^\]]*\])?\s*@`)

// looksLikeLocation reports what pip would take for a URL, a path or a
// VCS reference rather than a requirement by name.
func looksLikeLocation(s string) bool {
	if nameAtRE.MatchString(s) {
		return false // name @ URL: ParseRequirement says so
	}
	name, _, _ := strings.Cut(s, ";")
	name = strings.TrimSpace(name)
	lower := strings.ToLower(name)
	switch {
	case strings.Contains(name, "://"), strings.HasPrefix(lower, "git+"), strings.HasPrefix(lower, "hg+"),
		strings.HasPrefix(lower, "svn+"), strings.HasPrefix(lower, "bzr+"), strings.HasPrefix(lower, "file:"):
		return true
	case strings.HasPrefix(name, "."), strings.HasPrefix(name, "/"), strings.HasPrefix(name, "~"):
		return true
	}
	// A / or \ before any specifier or marker is a path; so is an archive.
	head := name
	if i := strings.IndexAny(head, "<>=!~;[( @"); i >= 0 {
		head = head[:i]
	}
	if strings.ContainsAny(head, `/\`) {
		return true
	}
	return slices.ContainsFunc(archiveExts, func(e string) bool { return strings.HasSuffix(lower, e) })
}

// hashLens are the hex lengths of pip's strong hashes.
var hashLens = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// checkHash checks a --hash value, "alg:hex", lowercasing the hex.
func checkHash(v string) (string, error) {
	alg, hx, ok := strings.Cut(v, ":")
	alg = strings.ToLower(alg)
	n, known := hashLens[alg]
	if !ok || !known {
		return "", errdefs.Errorf(errdefs.Invalid, "--hash %q: want sha256:<hex> (or sha384, sha512)", v)
	}
	hx = strings.ToLower(hx)
	if _, err := hex.DecodeString(hx); err != nil || len(hx) != n {
		return "", errdefs.Errorf(errdefs.Invalid, "--hash %q: not %d hex digits", v, n)
	}
	return alg + ":" + hx, nil
}
