package resolver

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
)

// Maven settings.xml (--settings): mirrors, server credentials,
// localRepository and offline. Profiles, proxies and encrypted passwords
// (settings-security.xml) are not supported.
//
// The repository ids a <mirrorOf> and a <server><id> match are Spark's
// Ivy resolver names: "central", "spark-packages" and "repo-1".."repo-N"
// for --repositories in order. local-m2-cache is never mirrored.

// mavenSettings is the part of a settings.xml prebake honours, interpolated.
type mavenSettings struct {
	path            string
	localRepository string // absolute; "" keeps ~/.m2/repository
	offline         bool
	mirrors         []settingsMirror
	servers         map[string]settingsServer // by id
}

type settingsMirror struct {
	ID       string `xml:"id"`
	URL      string `xml:"url"`
	MirrorOf string `xml:"mirrorOf"`
}

type settingsServer struct {
	ID       string `xml:"id"`
	Username string `xml:"username"`
	Password string `xml:"password"`
}

// settingsXML is the document; the namespace (SETTINGS/1.x.0) is ignored.
type settingsXML struct {
	XMLName         xml.Name         `xml:"settings"`
	LocalRepository string           `xml:"localRepository"`
	Offline         string           `xml:"offline"`
	Mirrors         []settingsMirror `xml:"mirrors>mirror"`
	Servers         []settingsServer `xml:"servers>server"`
}

// maxSettingsSize bounds a Maven settings.xml.
const maxSettingsSize = 4 << 20

// loadSettings reads and interpolates the settings file at path. home is
// ${user.home}; lookup reads ${env.NAME}. A missing file is
// errdefs.NotFound, a malformed one errdefs.Invalid; errors name the file and never a password.
func loadSettings(path, home string, lookup func(string) (string, bool)) (*mavenSettings, error) {
	// A regular file of at most 4 MiB: a FIFO or /dev/zero is refused
	// (errdefs.Invalid) before it is read.
	data, err := localfile.Read(path, maxSettingsSize)
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
	s := &mavenSettings{path: path, servers: map[string]settingsServer{}}
	// what names the field in errors; a secret field's value is never quoted.
	interp := func(what, v string) (string, error) {
		out, missing := interpolate(strings.TrimSpace(v), home, lookup)
		if missing != "" {
			return "", bad("%s: ${env.%s} is not set", what, missing)
		}
		return out, nil
	}
	if s.localRepository, err = interp("localRepository", doc.LocalRepository); err != nil {
		return nil, err
	}
	if s.localRepository != "" {
		if s.localRepository, err = filepath.Abs(s.localRepository); err != nil {
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
		s.offline = true
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
		s.mirrors = append(s.mirrors, m)
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
		if _, dup := s.servers[sv.ID]; !dup { // Maven: the first one wins
			s.servers[sv.ID] = sv
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

// mirrorFor returns the mirror of repository id at rawURL, or nil. As
// Maven's DefaultMirrorSelector: a mirror whose mirrorOf is exactly id wins,
// else the first whose pattern matches, in file order.
func (s *mavenSettings) mirrorFor(id, rawURL string) *settingsMirror {
	for i := range s.mirrors {
		if s.mirrors[i].MirrorOf == id {
			return &s.mirrors[i]
		}
	}
	for i := range s.mirrors {
		if mirrorOfMatches(s.mirrors[i].MirrorOf, id, rawURL) {
			return &s.mirrors[i]
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

// applySettings mirrors and authenticates chain as s says: the local m2
// cache moves to localRepository; every other repository with a mirror is
// replaced by the mirror (named by the mirror id), repositories sharing a
// mirror collapsing into one entry at the first one's place; credentials of
// the <server> with the mirror's id (else the repository's) apply as basic
// auth, replacing any URL userinfo.
func applySettings(chain []*repo, s *mavenSettings) ([]*repo, error) {
	out := make([]*repo, 0, len(chain))
	seen := map[string]bool{} // mirror ids already in out
	for _, r := range chain {
		if r.isM2Cache {
			if s.localRepository != "" {
				dir := s.localRepository
				r = &repo{
					Repository: Repository{Name: RepoLocalM2, URL: fileURL(dir)},
					base:       fileURL(dir), dir: dir, isM2Cache: true,
				}
			}
			out = append(out, r)
			continue
		}
		id := r.Name
		if m := s.mirrorFor(r.Name, r.URL); m != nil {
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			mr, err := parseRepo(m.ID, m.URL)
			if err != nil {
				return nil, fmt.Errorf("settings %s: mirror %s: %w", s.path, m.ID, err)
			}
			r, id = mr, m.ID
		}
		if sv, ok := s.servers[id]; ok {
			c := *r
			c.user, c.pass, c.hasAuth = sv.Username, sv.Password, true
			r = &c
		}
		out = append(out, r)
	}
	return out, nil
}

// settingsFor loads req.Settings ("" gives nil) with the chain's home as
// ${user.home} and the process environment.
func settingsFor(req Request, cfg chainConfig) (*mavenSettings, error) {
	if req.Settings == "" {
		return nil, nil
	}
	home := cfg.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return loadSettings(req.Settings, home, os.LookupEnv)
}

// settingsCredentials are the URLs, with userinfo, of the http(s)
// repositories of req's chain that cfg.settings gives server credentials
// (mirrors included).
func settingsCredentials(ctx context.Context, req Request, cfg chainConfig) ([]string, error) {
	chain, err := buildChain(ctx, req, cfg)
	if err != nil {
		return nil, err
	}
	var creds []string
	for _, r := range chain {
		if r.hasAuth && !r.isFile() {
			u, err := url.Parse(r.base)
			if err != nil {
				return nil, err
			}
			u.User = url.UserPassword(r.user, r.pass)
			creds = append(creds, u.String())
		}
	}
	return creds, nil
}
