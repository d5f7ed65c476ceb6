package pypi

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/prebake/prebake/internal/redact"
)

// tomlFile is a TOML file read, with what finds the lines of its parts
// (the TOML library gives the lines of syntax errors only).
type tomlFile struct {
	name  string
	lines []string
}

// decodeTOML reads path (with readFile's checks) and decodes it into v.
func decodeTOML(ctx context.Context, path string, o *readOptions, v any) (*tomlFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := readInputFile(path, o)
	if err != nil {
		return nil, err
	}
	if err := checkText(path, data); err != nil {
		return nil, err
	}
	f := &tomlFile{name: path, lines: strings.Split(string(data), "\n")}
	if _, err := toml.Decode(string(data), v); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, lineErrorf(Origin{path, pe.Position.Line}, "not valid TOML: %s", pe.Message)
		}
		return nil, lineErrorf(Origin{path, 0}, "not valid TOML: %v", err)
	}
	return f, nil
}

// requiresPython parses the value of the requires-python key at or
// after line from ("" gives none).
func (f *tomlFile) requiresPython(from int, value string) (Specifiers, error) {
	ss, err := ParseSpecifiers(value)
	if err != nil {
		return nil, lineError(f.at(f.keyLine(from, "requires-python")), fmt.Errorf("requires-python: %w", err))
	}
	return ss, nil
}

// at is a Origin of the file at line.
func (f *tomlFile) at(line int) Origin { return Origin{File: f.name, Line: line} }

// headers returns the lines (1-based) of the array-of-tables headers
// [[name]], in order: the i-th decoded table is at the i-th.
func (f *tomlFile) headers(name string) []int {
	re := regexp.MustCompile(`^\s*\[\[\s*` + regexp.QuoteMeta(name) + `\s*\]\]`)
	var out []int
	for i, l := range f.lines {
		if re.MatchString(l) {
			out = append(out, i+1)
		}
	}
	return out
}

// nthLine is the i-th of lines, or 0.
func nthLine(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// find returns the first line at or after from that holds one of
// needles, or from.
func (f *tomlFile) find(from int, needles ...string) int {
	for i := max(from-1, 0); i < len(f.lines); i++ {
		for _, n := range needles {
			if strings.Contains(f.lines[i], n) {
				return i + 1
			}
		}
	}
	return from
}

// keyLine is the line of "key =" at or after from.
func (f *tomlFile) keyLine(from int, key string) int {
	re := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(key) + `"?\s*=`)
	for i := max(from-1, 0); i < len(f.lines); i++ {
		if re.MatchString(f.lines[i]) {
			return i + 1
		}
	}
	return from
}

// tomlQuoted are the TOML spellings of s as a string.
func tomlQuoted(s string) []string { return []string{`"` + s + `"`, `'` + s + `'`} }

// lockWheelName is a wheel's file name: the one given, else its URL's last
// segment.
func lockWheelName(name, rawURL string) string {
	if name != "" {
		return name
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}

// lockSHA256 checks a sha256 hex digest, lowercasing it.
func lockSHA256(h string) (string, error) {
	h = strings.ToLower(h)
	if _, err := hex.DecodeString(h); err != nil || len(h) != 64 {
		return "", fmt.Errorf("sha256 %q is not 64 hex digits", h)
	}
	return h, nil
}

// lockFileURL checks the URL of a wheel or sdist: http(s), no userinfo
// kept.
func lockFileURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("URL %q is not an http(s) URL", redact.URL(raw))
	}
	return noUserinfo(raw), nil
}
