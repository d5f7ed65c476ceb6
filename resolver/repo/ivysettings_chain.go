package repo

// From a parsed Ivy settings file to prebake's repository chain, as Spark
// builds it (loadIvySettings): the settings' default resolver, then, when
// --repositories is given, processRemoteRepoArg's chain "user-list" =
// [default resolver, repo-1, …, repo-N] (IBiblio, m2compatible, usepoms).
// spark.jars.ivy (processIvyPathArg) only moves Ivy's user dir and cache
// after the file is loaded: it changes no resolver of the file.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver/ivysettings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// m2Pattern is IBiblioResolver's default m2 pattern.
const m2Pattern = "[organisation]/[module]/[revision]/[artifact]-[revision](-[classifier]).[ext]"

// ivyLayout is a resolver's own file layout (patterns relative to the
// repo's base URL), for url and filesystem resolvers and ibiblio ones with
// a custom pattern.
type ivyLayout struct {
	ivy, artifact string
	// pomArtifact: the descriptor is IBiblio's POM artifact ([artifact] is
	// the module, [ext] and [type] "pom"), else Ivy's descriptor artifact
	// ([artifact] "ivy", [ext] "xml", [type] "ivy").
	pomArtifact bool
	m2          bool // m2compatible: [organisation] has / for .
}

// ivyChain is what a chain's flags change for the repositories in it.
type ivyChain struct {
	name        string
	returnFirst bool
	members     []*entry
}

// ivyTokens is a pattern's values.
type ivyTokens struct{ org, module, artifact, revision, classifier, ext, typ string }

// substPattern is IvyPatternHelper.substituteTokens: [token] is replaced,
// an optional part (…) is dropped when a token in it is empty.
func substPattern(p string, t ivyTokens, m2 bool) (string, error) {
	org := t.org
	if m2 {
		org = strings.ReplaceAll(org, ".", "/")
	}
	val := func(tok string) (string, error) {
		switch tok {
		case "organisation", "organization":
			return org, nil
		case "orgPath":
			return strings.ReplaceAll(t.org, ".", "/"), nil
		case "module":
			return t.module, nil
		case "artifact":
			return t.artifact, nil
		case "revision":
			return t.revision, nil
		case "classifier":
			return t.classifier, nil
		case "ext":
			return t.ext, nil
		case "type":
			return t.typ, nil
		}
		return "", fmt.Errorf("token [%s] is not supported by prebake", tok)
	}
	var out, opt strings.Builder
	inOpt, optEmpty := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		w := &out
		if inOpt {
			w = &opt
		}
		switch c {
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return "", fmt.Errorf("unclosed [ in %q", p)
			}
			v, err := val(p[i+1 : i+j])
			if err != nil {
				return "", err
			}
			if v == "" {
				optEmpty = true
			}
			w.WriteString(v)
			i += j
		case '(':
			if inOpt {
				return "", fmt.Errorf("nested ( in %q", p)
			}
			inOpt, optEmpty = true, false
			opt.Reset()
		case ')':
			if !inOpt {
				w.WriteByte(c)
				continue
			}
			if !optEmpty {
				out.WriteString(opt.String())
			}
			inOpt = false
		default:
			w.WriteByte(c)
		}
	}
	if inOpt {
		return "", fmt.Errorf("unclosed ( in %q", p)
	}
	return out.String(), nil
}

// pomPath is where l's descriptor of g:a:v is, relative to the base.
func (l *ivyLayout) pomPath(g, a, v string) (string, error) {
	t := ivyTokens{org: g, module: a, revision: v, artifact: "ivy", ext: "xml", typ: "ivy"}
	if l.pomArtifact {
		t.artifact, t.ext, t.typ = a, "pom", "pom"
	}
	return substPattern(l.ivy, t, l.m2)
}

// artifactPath is where l's artifact is, relative to the base.
func (l *ivyLayout) artifactPath(g, a, v, classifier, ext string) (string, error) {
	if ext == "" {
		ext = "jar"
	}
	return substPattern(l.artifact, ivyTokens{org: g, module: a, artifact: a, revision: v, classifier: classifier, ext: ext, typ: ext}, l.m2)
}

// versionDir is the directory l lists for g:a's revisions: the descriptor
// pattern up to the directory holding [revision].
func (l *ivyLayout) versionDir(g, a string) (string, error) {
	i := strings.Index(l.ivy, "[revision]")
	if i < 0 || !strings.HasSuffix(l.ivy[:i], "/") || strings.ContainsAny(l.ivy[:i], "()") {
		return "", fmt.Errorf("its pattern %q has no [revision] directory to list", l.ivy)
	}
	return substPattern(l.ivy[:i], ivyTokens{org: g, module: a}, l.m2)
}

// relPaths are the paths, relative to r's base, where r may hold the file
// (Maven layout: a SNAPSHOT's timestamped name first).
func (s *Source) relPaths(ctx context.Context, a asker, r *entry, group, artifact, version, classifier, ext string) ([]string, error) {
	if l := r.layout; l != nil {
		var p string
		var err error
		if ext == "pom" && classifier == "" {
			p, err = l.pomPath(group, artifact, version)
		} else {
			p, err = l.artifactPath(group, artifact, version, classifier, ext)
		}
		if err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "repository %s: %v", r, err)
		}
		return []string{p}, nil
	}
	var out []string
	for _, n := range s.fileNames(ctx, a, r, group, artifact, version, classifier, ext) {
		out = append(out, ModulePath(group, artifact, version)+n)
	}
	return out, nil
}

// versionsDir is the directory r lists g:a's versions in (with
// maven-metadata.xml for the Maven layout).
func versionsDir(r *entry, group, artifact string) (dir string, metadata bool, err error) {
	if r.chain != nil && r.chain.returnFirst && len(r.chain.members) > 1 {
		// Ivy takes the first resolver with any matching revision; prebake
		// compares them all (returnFirst="false").
		return "", false, errdefs.Errorf(errdefs.Invalid, "versions of %s:%s: chain %s has returnFirst=\"true\": prebake does not resolve dynamic revisions through it", group, artifact, r.chain.name)
	}
	if r.layout == nil {
		return strings.ReplaceAll(group, ".", "/") + "/" + artifact + "/", true, nil
	}
	dir, err = r.layout.versionDir(group, artifact)
	if err != nil {
		return "", false, errdefs.Errorf(errdefs.Invalid, "versions of %s:%s in repository %s: %v", group, artifact, r, err)
	}
	return dir, false, nil
}

// artifactRepos are the repositories an artifact of a module found in r
// is looked up in: r alone, or, when r is in a dual chain, the whole
// chain in order (ChainResolver in dual mode downloads through itself).
func artifactRepos(r *entry) []*entry {
	if r.dual != nil {
		return r.dual
	}
	return []*entry{r}
}

// ivyChainFor reads req.IvySettings (with req.Home as ${user.home}) and
// builds its chain.
func ivyChainFor(ctx context.Context, req Config, o *options) ([]*entry, error) {
	if req.Settings != "" {
		return nil, errdefs.Optionf(errdefs.BadArgument, "resolver.Request.Settings", "Maven settings.xml (Settings) and Ivy settings (IvySettings, spark.jars.ivySettings) cannot be combined: Spark reads only the Ivy settings")
	}
	env := ivysettings.Env{Home: req.Home, LookupEnv: os.LookupEnv}
	if u, err := user.Current(); err == nil {
		env.User = u.Username
	}
	env.Cwd, _ = os.Getwd()
	st, err := o.loadIvy(ctx, req.IvySettings, env)
	if err != nil {
		return nil, err
	}
	return ivyFile{st}.chain(req.Repositories)
}

// ivyFile builds the repository chain of a settings file.
type ivyFile struct {
	*ivysettings.Settings
}

// chain flattens the default resolver, with --repositories on top.
func (s ivyFile) chain(repositories []string) ([]*entry, error) {
	var out []*entry
	if s.DefaultResolver != "" {
		root, ok := s.Resolvers[s.DefaultResolver]
		if !ok {
			return nil, ivysettings.Errorf(errdefs.Invalid, s.Path, "defaultResolver %q: no resolver has that name", s.DefaultResolver)
		}
		seen := map[*ivysettings.Resolver]bool{}
		var err error
		if out, err = s.flatten(root, seen, 0); err != nil {
			return nil, err
		}
	}
	user, err := userRepositories(repositories)
	if err != nil {
		return nil, err
	}
	if out = append(out, user...); len(out) == 0 {
		return nil, ivysettings.Errorf(errdefs.Invalid, s.Path, "no defaultResolver in <settings>, and no extra repositories (spark.jars.repositories): Spark would have no resolver")
	}
	if err := s.applyCredentials(out); err != nil {
		return nil, err
	}
	return out, nil
}

// flatten turns a resolver into the repositories it queries, in order.
func (s ivyFile) flatten(r *ivysettings.Resolver, seen map[*ivysettings.Resolver]bool, depth int) ([]*entry, error) {
	if depth > 16 {
		return nil, ivysettings.Errorf(errdefs.Invalid, s.Path, "%s: chains nested deeper than 16", r.At)
	}
	if seen[r] {
		return nil, nil // a resolver twice in a chain finds nothing new the second time
	}
	seen[r] = true
	bad := func(format string, args ...any) error {
		return ivysettings.Errorf(errdefs.Invalid, s.Path, "%s: <%s name=%q>: %s", r.At, r.Kind, r.Name, fmt.Sprintf(format, args...))
	}
	switch r.Kind {
	case "chain":
		var members []*entry
		for _, c := range r.Children {
			m, err := s.flatten(c, seen, depth+1)
			if err != nil {
				return nil, err
			}
			members = append(members, m...)
		}
		ch := &ivyChain{name: r.Name, returnFirst: r.ReturnFirst, members: members}
		for _, m := range members {
			if r.Dual {
				m.dual = members // the outermost dual chain wins
			}
			if r.ReturnFirst || m.chain == nil {
				m.chain = ch
			}
		}
		return members, nil
	case "ibiblio":
		if !r.M2 {
			return nil, bad("m2compatible is not true: the Maven 1 layout is not supported by prebake")
		}
		if !r.UsePOMs {
			return nil, bad("usepoms=\"false\" (jars without their POMs' dependencies) is not supported by prebake")
		}
		root := r.Root
		if root == "" {
			root = DefaultCentralURL
		}
		rp, err := parseRepo(r.Name, root)
		if err != nil {
			return nil, bad("%v", err)
		}
		if r.Pattern != "" && r.Pattern != m2Pattern {
			rp.layout = &ivyLayout{ivy: r.Pattern, artifact: r.Pattern, pomArtifact: true, m2: true}
			if err := s.checkLayout(r, rp.layout); err != nil {
				return nil, err
			}
		}
		return []*entry{rp}, nil
	case "url", "filesystem":
		if len(r.IvyPatterns) != 1 || len(r.ArtifactPatterns) != 1 {
			return nil, bad("prebake reads exactly one <ivy pattern> (pointing at POMs) and one <artifact pattern> (found %d and %d)", len(r.IvyPatterns), len(r.ArtifactPatterns))
		}
		ivyP, artP := r.IvyPatterns[0], r.ArtifactPatterns[0]
		if r.Kind == "filesystem" {
			for _, p := range []*string{&ivyP, &artP} {
				if !filepath.IsAbs(*p) {
					return nil, bad("pattern %q is not an absolute path", *p)
				}
				*p = "file://" + filepath.ToSlash(*p)
			}
		}
		base := commonBase(ivyP, artP)
		if base == "" {
			return nil, bad("patterns %q and %q share no literal directory", redact.String(ivyP), redact.String(artP))
		}
		rp, err := parseRepo(r.Name, base)
		if err != nil {
			return nil, bad("%v", err)
		}
		rp.layout = &ivyLayout{ivy: ivyP[len(base):], artifact: artP[len(base):], m2: r.M2}
		if err := s.checkLayout(r, rp.layout); err != nil {
			return nil, err
		}
		return []*entry{rp}, nil
	}
	return nil, bad("not supported by prebake")
}

// commonBase is the longest literal prefix, ending in /, of both patterns.
func commonBase(a, b string) string {
	lit := func(p string) string {
		if i := strings.IndexAny(p, "[("); i >= 0 {
			p = p[:i]
		}
		return p[:strings.LastIndexByte(p, '/')+1]
	}
	x, y := lit(a), lit(b)
	for !strings.HasPrefix(y, x) {
		x = x[:strings.LastIndexByte(strings.TrimSuffix(x, "/"), '/')+1]
		if x == "" {
			return ""
		}
	}
	if !strings.Contains(x, ":/") && !strings.HasPrefix(x, "/") {
		return ""
	}
	return x
}

// checkLayout checks a layout's patterns once: known tokens, and a
// descriptor that is a POM (prebake reads no ivy.xml).
func (s ivyFile) checkLayout(r *ivysettings.Resolver, l *ivyLayout) error {
	p, err := l.pomPath("org.example", "mod", "1.0")
	if err == nil {
		_, err = l.artifactPath("org.example", "mod", "1.0", "cls", "jar")
	}
	if err != nil {
		return ivysettings.Errorf(errdefs.Invalid, s.Path, "%s: <%s name=%q>: %v", r.At, r.Kind, r.Name, err)
	}
	if !strings.HasSuffix(p, ".pom") && !strings.HasSuffix(p, "pom.xml") {
		return ivysettings.Errorf(errdefs.Invalid, s.Path, "%s: <%s name=%q>: its <ivy pattern> names Ivy module descriptors (%s); prebake reads POMs only (a pattern ending in .pom)", r.At, r.Kind, r.Name, p)
	}
	return nil
}

// applyCredentials gives every http(s) repository of the chain the
// <credentials> of its host. Ivy picks credentials by the realm the server
// asks with and the host; prebake sends the host's credentials whatever
// the realm, so two different credentials for one host are refused.
func (s ivyFile) applyCredentials(chain []*entry) error {
	byHost := map[string]ivysettings.Credentials{}
	for _, c := range s.Credentials {
		if prev, ok := byHost[c.Host]; ok && (prev.User != c.User || prev.Pass != c.Pass) {
			if prev.Realm == c.Realm {
				byHost[c.Host] = c // the same key: the later one replaces it
				continue
			}
			return ivysettings.Errorf(errdefs.Invalid, s.Path, "%s: <credentials host=%q>: a second set of credentials for the host (%s), for another realm; prebake does not choose by realm", c.At, c.Host, prev.At)
		}
		byHost[c.Host] = c
	}
	for _, r := range chain {
		if r.isFile() || r.hasAuth {
			continue
		}
		u, err := url.Parse(r.base)
		if err != nil {
			continue
		}
		if c, ok := byHost[u.Hostname()]; ok {
			r.user, r.pass, r.hasAuth = c.User, c.Pass, true
		}
	}
	return nil
}

// inputsEntry is how r is written in a lock's inputs: its URL, plus the
// layout and chain flags that change what it serves.
func (r *entry) inputsEntry() string {
	e := r.URL
	if l := r.layout; l != nil {
		e += " ivy=" + l.ivy + " artifact=" + l.artifact
		if l.m2 {
			e += " m2compatible"
		}
	}
	if r.dual != nil {
		e += " dual"
	}
	if r.chain != nil && r.chain.returnFirst {
		e += " returnFirst"
	}
	return e
}

// IvyHomeWarning is the warning for spark.jars.ivy with the default chain:
// Spark's local-ivy-cache resolver reads <ivy home>/local, which prebake
// does not (it holds ivy.xml modules, published with `ivy publish`).
func IvyHomeWarning(req Config) string {
	if req.IvyHome == "" || req.IvySettings != "" || req.NoDefaultRepositories {
		return ""
	}
	dir := filepath.Join(req.IvyHome, "local")
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Sprintf("spark.jars.ivy: %s holds an Ivy local repository (Spark's local-ivy-cache resolver); prebake does not read it", dir)
	}
	return ""
}

// servedBy is the repository a lock records for an artifact: the one that
// served it (a dual chain's artifact may come from another repository
// than its POM).
func servedBy(ref ArtifactRef, cf *CachedFile) Repository {
	if cf.Repo.URL != "" {
		return cf.Repo
	}
	return ref.Repo
}

// lockedRelIn is where r holds a locked artifact: r's own layout, else
// the Maven path (lockedRel).
func lockedRelIn(r *entry, a lock.Artifact, readMeta func(rel string) ([]byte, error)) (string, error) {
	if r.layout == nil {
		return lockedRel(a, readMeta)
	}
	p, cls, err := lockedCoord(a)
	if err != nil {
		return "", err
	}
	rel, err := r.layout.artifactPath(p[0], p[1], p[2], cls, "jar")
	if err != nil {
		return "", errdefs.Errorf(errdefs.Invalid, "lockfile artifact %s in repository %s: %v", a.File, r, err)
	}
	return rel, nil
}
