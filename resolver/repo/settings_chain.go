package repo

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/prebake/prebake/resolver/mavensettings"
)

// Maven settings.xml applied to the chain: mirrors, server credentials,
// localRepository (the model is package mavensettings).

// applySettings mirrors and authenticates chain as s says: the local m2
// cache moves to localRepository; every other repository with a mirror is
// replaced by the mirror (named by the mirror id), repositories sharing a
// mirror collapsing into one entry at the first one's place; credentials of
// the <server> with the mirror's id (else the repository's) apply as basic
// auth, replacing any URL userinfo.
func applySettings(chain []*entry, s *mavensettings.Settings) ([]*entry, error) {
	out := make([]*entry, 0, len(chain))
	seen := map[string]bool{} // mirror ids already in out
	for _, r := range chain {
		if r.isM2Cache {
			if s.LocalRepository != "" {
				dir := s.LocalRepository
				r = &entry{
					Repository: Repository{Name: RepoLocalM2, URL: fileURL(dir)},
					base:       fileURL(dir), dir: dir, isM2Cache: true,
				}
			}
			out = append(out, r)
			continue
		}
		id := r.Name
		if m := s.MirrorFor(r.Name, r.URL); m != nil {
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			mr, err := parseRepo(m.ID, m.URL)
			if err != nil {
				return nil, fmt.Errorf("settings %s: mirror %s: %w", s.Path, m.ID, err)
			}
			r, id = mr, m.ID
		}
		if sv, ok := s.Servers[id]; ok {
			c := *r
			c.user, c.pass, c.hasAuth = sv.Username, sv.Password, true
			r = &c
		}
		out = append(out, r)
	}
	return out, nil
}

// settingsFor reads req.Settings ("" gives nil) with req.Home as
// ${user.home} and the process environment for ${env.X}.
func settingsFor(req Config, o *options) (*mavensettings.Settings, error) {
	if req.Settings == "" {
		return nil, nil
	}
	return o.loadSettings(req.Settings, req.Home, os.LookupEnv)
}

// settingsCredentials are the URLs, with userinfo, of the http(s)
// repositories of req's chain that s (req.Settings as read) gives server
// credentials (mirrors included).
func settingsCredentials(ctx context.Context, req Config, s *mavensettings.Settings, o *options) ([]string, error) {
	chain, err := buildChain(ctx, req, s, o)
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
