package repo

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/resolver/mavensettings"
)

// Spark's resolver names and default roots (SparkSubmitUtils.buildIvySettings,
// spark-semantics §1.4).
const (
	RepoLocalM2      = "local-m2-cache"
	RepoCentral      = "central"
	RepoSparkPackage = "spark-packages"

	DefaultCentralURL       = "https://repo1.maven.org/maven2/"
	DefaultSparkPackagesURL = "https://repos.spark-packages.org/"

	// EnvDefaultArtifactRepository redirects both central and spark-packages,
	// as in Spark.
	EnvDefaultArtifactRepository = "DEFAULT_ARTIFACT_REPOSITORY"

	// m2InputsName is how the local Maven repository is written in a lock's
	// inputs, so that a lock made on one machine matches on another.
	m2InputsName = "~/.m2/repository/"
)

// entry is one entry of the chain, with its credentials (never printed).
type entry struct {
	Repository        // Name and URL without userinfo: safe to print
	base       string // the URL with a trailing slash, without userinfo
	dir        string // for file repositories: the local directory
	user, pass string // basic auth from the URL's userinfo
	hasAuth    bool
	isM2Cache  bool // the user's ~/.m2: checksums are not expected there

	// From an Ivy settings file (ivysettings_chain.go): the resolver's own
	// layout (nil: Maven's), the dual chain artifacts are looked up in,
	// and the chain whose flags apply.
	layout *ivyLayout
	dual   []*entry
	chain  *ivyChain
}

func (r *entry) isFile() bool { return r.dir != "" }

// String is the repository as printed in errors: "name (url)".
func (r *entry) String() string { return r.Name + " (" + r.URL + ")" }

// chainFor builds req's chain once for a call (Resolve, NewSource,
// LockFor, ProbeChain): req.Settings is read (once) and applied, or
// req.IvySettings read and flattened. settings is req.Settings as read
// (nil without); its <offline> is the caller's to apply.
func chainFor(ctx context.Context, req Config, o *options) (chain []*entry, settings *mavensettings.Settings, err error) {
	if settings, err = settingsFor(req, o); err != nil {
		return nil, nil, err
	}
	if chain, err = buildChain(ctx, req, settings, o); err != nil {
		return nil, nil, err
	}
	return chain, settings, nil
}

// buildChain returns Spark's repository chain for req (spark-semantics §1.4):
// local-m2-cache (under req.Home), central, spark-packages (unless
// NoDefaultRepositories; req.DefaultArtifactRepository replaces the last
// two roots), then --repositories as repo-1..N, split on "," with no
// trimming; then s (req.Settings as read, nil without) applies its
// mirrors, server credentials and localRepository (applySettings). With
// req.IvySettings, the chain is that file's (ivyChainFor).
//
// Spark's local-ivy-cache resolver (<ivy home>/local/…) sits between
// local-m2-cache and central. It is modelled as absent: only `ivy publish`
// writes there, prebake never does, and a resolution that depended on it
// could not be reproduced from a lock on another machine.
func buildChain(ctx context.Context, req Config, s *mavensettings.Settings, o *options) ([]*entry, error) {
	if req.IvySettings != "" {
		return ivyChainFor(ctx, req, o)
	}
	var chain []*entry
	if !req.NoDefaultRepositories {
		if home := req.Home; home != "" {
			dir := filepath.Join(home, ".m2", "repository")
			chain = append(chain, &entry{
				Repository: Repository{Name: RepoLocalM2, URL: fileURL(dir)},
				base:       fileURL(dir),
				dir:        dir,
				isM2Cache:  true,
			})
		}
		central, sparkPackages := DefaultCentralURL, DefaultSparkPackagesURL
		if d := req.DefaultArtifactRepository; d != "" {
			central, sparkPackages = d, d
		}
		for _, d := range []struct{ name, url string }{{RepoCentral, central}, {RepoSparkPackage, sparkPackages}} {
			r, err := parseRepo(d.name, d.url)
			if err != nil {
				return nil, err
			}
			chain = append(chain, r)
		}
	}
	user, err := userRepositories(req.Repositories)
	if err != nil {
		return nil, err
	}
	if chain = append(chain, user...); len(chain) == 0 {
		return nil, errdefs.Optionf(errdefs.BadArgument, "resolver.Request.NoDefaultRepositories", "no repository to resolve from: without the default repositories, Repositories must name one")
	}
	if s != nil {
		return applySettings(chain, s)
	}
	return chain, nil
}

// userRepositories are --repositories as Spark adds them: split on ","
// with no trimming, named repo-1..N.
func userRepositories(values []string) ([]*entry, error) {
	var out []*entry
	for _, v := range values {
		for _, u := range strings.Split(v, ",") {
			if u == "" {
				// Spark would add an IBiblio resolver with an empty root that
				// never finds anything; skipping it changes no result.
				continue
			}
			r, err := parseRepo(fmt.Sprintf("repo-%d", len(out)+1), u)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// parseRepo parses one repository URL (http, https or file).
func parseRepo(name, raw string) (*entry, error) {
	u, err := url.Parse(raw)
	if err != nil && strings.Contains(raw, "@") {
		// Go's message quotes pieces of the userinfo ("invalid port \":pa\""):
		// not printed.
		return nil, errdefs.Errorf(errdefs.BadArgument, "repository %s %q: not a valid URL; percent-encode reserved characters in its credentials (/ as %%2F, @ as %%40, a space as %%20)", name, redact.URL(raw))
	}
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "repository %s %q: %v", name, redact.String(raw), redactErr(err))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errdefs.Errorf(errdefs.BadArgument, "repository %s %q: port %s is not in 1-65535", name, redact.URL(raw), p)
		}
	}
	r := &entry{Repository: Repository{Name: name}}
	if u.User != nil {
		r.user = u.User.Username()
		r.pass, _ = u.User.Password()
		r.hasAuth = true
		u.User = nil
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, errdefs.Errorf(errdefs.BadArgument, "repository %s %q: no host", name, u.String())
		}
	case "file":
		p := u.Path
		if p == "" {
			p = u.Opaque // file:relative/path
		}
		if p == "" {
			return nil, errdefs.Errorf(errdefs.BadArgument, "repository %s %q: no path", name, u.String())
		}
		r.dir = filepath.FromSlash(p)
	default:
		return nil, errdefs.Errorf(errdefs.BadArgument, "repository %s %q: scheme must be http, https or file", name, redact.URL(raw))
	}
	s := u.String()
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	r.base = s
	r.URL = s
	return r, nil
}

// redactErr renders a url.Parse error without the URL it quotes.
func redactErr(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return redact.String(err.Error())
}

// fileURL returns the file: URL of a directory, with a trailing slash.
func fileURL(dir string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	s := u.String()
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

// inputsRepositories is the chain as recorded in a lock's inputs: URLs
// without userinfo, ~/.m2 written home-independently.
func inputsRepositories(chain []*entry) []string {
	out := make([]string, 0, len(chain))
	for _, r := range chain {
		if r.isM2Cache {
			out = append(out, m2InputsName)
			continue
		}
		out = append(out, r.inputsEntry())
	}
	return out
}

// ModulePath is the m2 directory of g:a:v relative to a repository root.
func ModulePath(group, artifact, version string) string {
	return strings.ReplaceAll(group, ".", "/") + "/" + artifact + "/" + version + "/"
}

// ArtifactFileName is the m2 file name of an artifact.
func ArtifactFileName(artifact, version, classifier, ext string) string {
	if ext == "" {
		ext = "jar"
	}
	n := artifact + "-" + version
	if classifier != "" {
		n += "-" + classifier
	}
	return n + "." + ext
}

// SparkFileName is the name Spark retrieves an artifact as:
// [organization]_[artifact]-[revision](-[classifier]).[ext].
func SparkFileName(group, artifact, version, classifier, ext string) string {
	return group + "_" + ArtifactFileName(artifact, version, classifier, ext)
}
