package mavensettings

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
)

// Maven settings.xml (the one the caller names): mirrors, server credentials,
// localRepository and offline. Profiles, proxies and encrypted passwords
// (settings-security.xml) are not supported.
//
// The repository ids a <mirrorOf> and a <server><id> match are Spark's
// Ivy resolver names: "central", "spark-packages" and "repo-1".."repo-N"
// for --repositories in order. local-m2-cache is never mirrored.

// Settings is the part of a settings.xml prebake honours, interpolated.
type Settings struct {
	Path            string
	LocalRepository string // absolute; "" keeps ~/.m2/repository
	Offline         bool
	Mirrors         []Mirror
	Servers         map[string]Server // by id
}

// Mirror is a <mirror>.
type Mirror struct {
	ID       string `xml:"id"`
	URL      string `xml:"url"`
	MirrorOf string `xml:"mirrorOf"`
}

// Server is a <server>: the credentials of a repository or mirror id.
type Server struct {
	ID       string `xml:"id"`
	Username string `xml:"username"`
	Password string `xml:"password"`
}

// settingsXML is the document; the namespace (SETTINGS/1.x.0) is ignored.
type settingsXML struct {
	XMLName         xml.Name `xml:"settings"`
	LocalRepository string   `xml:"localRepository"`
	Offline         string   `xml:"offline"`
	Mirrors         []Mirror `xml:"mirrors>mirror"`
	Servers         []Server `xml:"servers>server"`
}

// MaxFileSize bounds a Maven settings.xml.
const MaxFileSize = 4 << 20

// Load reads and interpolates the settings file at path. home is
// ${user.home}; lookup reads ${env.NAME}. A missing file is
// errdefs.NotFound, a malformed one errdefs.Invalid; errors name the file and never a password.
func Load(path, home string, lookup func(string) (string, bool)) (*Settings, error) {
	// A regular file of at most 4 MiB: a FIFO or /dev/zero is refused
	// (errdefs.Invalid) before it is read.
	data, err := localfile.Read(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("settings %w", err)
	}
	var doc settingsXML
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("settings %s: malformed XML: %w", path, err))
	}
	bad := func(format string, args ...any) error {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("settings %s: %s", path, fmt.Sprintf(format, args...)))
	}
	s := &Settings{Path: path, Servers: map[string]Server{}}
	// what names the field in errors; a secret field's value is never quoted.
	interp := func(what, v string) (string, error) {
		out, missing := interpolate(strings.TrimSpace(v), home, lookup)
		if missing != "" {
			return "", bad("%s: ${env.%s} is not set", what, missing)
		}
		return out, nil
	}
	if s.LocalRepository, err = interp("localRepository", doc.LocalRepository); err != nil {
		return nil, err
	}
	if s.LocalRepository != "" {
		if s.LocalRepository, err = filepath.Abs(s.LocalRepository); err != nil {
			return nil, bad("localRepository: %v", err)
		}
	}
	off, err := interp("offline", doc.Offline)
	if err != nil {
		return nil, err
	}
	switch off {
	case "", "false":
	case "true":
		s.Offline = true
	default:
		return nil, bad("offline is %q, want true or false", off)
	}
	for i, m := range doc.Mirrors {
		what := fmt.Sprintf("mirror %d", i+1)
		for _, f := range []*string{&m.ID, &m.URL, &m.MirrorOf} {
			if *f, err = interp(what, *f); err != nil {
				return nil, err
			}
		}
		switch {
		case m.ID == "":
			return nil, bad("%s: no <id>", what)
		case m.URL == "":
			return nil, bad("mirror %s: no <url>", m.ID)
		case m.MirrorOf == "":
			return nil, bad("mirror %s: no <mirrorOf>", m.ID)
		}
		s.Mirrors = append(s.Mirrors, m)
	}
	for i, sv := range doc.Servers {
		if sv.ID, err = interp(fmt.Sprintf("server %d", i+1), sv.ID); err != nil {
			return nil, err
		}
		if sv.ID == "" {
			return nil, bad("server %d: no <id>", i+1)
		}
		what := "server " + sv.ID
		if sv.Username, err = interp(what+" username", sv.Username); err != nil {
			return nil, err
		}
		if sv.Password, err = interp(what+" password", sv.Password); err != nil {
			return nil, err
		}
		if encryptedRE.MatchString(sv.Password) {
			return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("settings %s: server %s: encrypted passwords (settings-security.xml) are not supported; use ${env.NAME}", path, sv.ID))
		}
		if _, dup := s.Servers[sv.ID]; !dup { // Maven: the first one wins
			s.Servers[sv.ID] = sv
		}
	}
	return s, nil
}

// encryptedRE matches a Maven-encrypted password ({base64}), which needs
// the master password of settings-security.xml.
var encryptedRE = regexp.MustCompile(`^\{[A-Za-z0-9+/=]{8,}\}$`)

var interpRE = regexp.MustCompile(`\$\{(env\.[A-Za-z_][A-Za-z0-9_.]*|user\.home)\}`)

// interpolate replaces ${user.home} and ${env.NAME}; other expressions are
// left as they are (as Maven does). missing is the first unset variable.
func interpolate(s, home string, lookup func(string) (string, bool)) (out, missing string) {
	out = interpRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		if name == "user.home" {
			return home
		}
		v, ok := lookup(strings.TrimPrefix(name, "env."))
		if !ok && missing == "" {
			missing = strings.TrimPrefix(name, "env.")
		}
		return v
	})
	return out, missing
}

// MirrorFor returns the mirror of repository id at rawURL, or nil. As
// Maven's DefaultMirrorSelector: a mirror whose mirrorOf is exactly id wins,
// else the first whose pattern matches, in file order.
func (s *Settings) MirrorFor(id, rawURL string) *Mirror {
	for i := range s.Mirrors {
		if s.Mirrors[i].MirrorOf == id {
			return &s.Mirrors[i]
		}
	}
	for i := range s.Mirrors {
		if mirrorOfMatches(s.Mirrors[i].MirrorOf, id, rawURL) {
			return &s.Mirrors[i]
		}
	}
	return nil
}

// mirrorOfMatches is Maven's mirrorOf pattern: "*", "id", "a,b",
// "external:*" (not localhost, 127.0.0.1 or file:), "external:http:*"
// (plain http and not local), and "!id" exclusions, which win wherever they
// appear.
func mirrorOfMatches(pattern, id, rawURL string) bool {
	if pattern == "*" || pattern == id {
		return true
	}
	scheme, host := "", ""
	if u, err := url.Parse(rawURL); err == nil {
		scheme, host = strings.ToLower(u.Scheme), u.Hostname()
	}
	local := host == "localhost" || host == "127.0.0.1" || scheme == "file"
	match := false
	for _, p := range strings.Split(pattern, ",") {
		p = strings.TrimSpace(p)
		switch {
		case len(p) > 1 && p[0] == '!':
			if p[1:] == id {
				return false
			}
		case p == id:
			return true
		case p == "*":
			match = true
		case p == "external:*" && !local:
			match = true
		case p == "external:http:*" && scheme == "http" && !local:
			match = true
		}
	}
	return match
}
