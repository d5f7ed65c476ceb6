package cmd

import (
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/resolver"
)

// resolveFlags are the resolution flags shared by every command that
// resolves (see the conventions). They are defined once, here.
type resolveFlags struct {
	packages              []string
	repositories          []string
	excludes              []string
	noDefaultRepositories bool
	settings              string
	ivySettings           string
	ivyHome               string
	conflict              resolver.Conflict
	lock                  string
	frozen                bool
	offline               bool
	cache                 string
	checksumPolicy        resolver.ChecksumPolicy
}

func (f *resolveFlags) add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.packages, "packages", nil, "comma-separated Maven coordinates g:a:v, as spark-submit --packages")
	fs.StringArrayVar(&f.repositories, "repositories", nil, "comma-separated extra repository URLs (http, https, file; user:pass@ allowed), as spark-submit --repositories")
	fs.StringArrayVar(&f.excludes, "exclude-packages", nil, "comma-separated g:a (globs allowed) to exclude, as spark-submit --exclude-packages")
	fs.BoolVar(&f.noDefaultRepositories, "no-default-repositories", false, "drop ~/.m2/repository, Central and spark-packages from the chain")
	fs.StringVar(&f.settings, "settings", "", "Maven settings.xml for mirrors and server credentials")
	fs.StringVar(&f.ivySettings, "ivy-settings", "", "Ivy settings file whose resolvers replace the default chain, as spark.jars.ivySettings")
	fs.StringVar(&f.ivyHome, "ivy", "", "Ivy user directory, as spark.jars.ivy (prebake keeps its own cache; see the README)")
	fs.StringVar((*string)(&f.conflict), "conflict", string(resolver.ConflictLatest), "conflict rule: latest (Spark/Ivy) or nearest (Maven)")
	fs.StringVar(&f.lock, "lock", "", "lockfile: used when it matches the inputs, written after a resolution")
	fs.BoolVar(&f.frozen, "frozen", false, "fail (exit 78) when the lock is missing or stale instead of resolving")
	fs.BoolVar(&f.offline, "offline", false, "make no network request; use only the cache")
	fs.StringVar(&f.cache, "cache", "", "cache directory (default $PREBAKE_CACHE, else the user cache dir + /prebake)")
	fs.StringVar((*string)(&f.checksumPolicy), "checksum-policy", string(resolver.ChecksumWarn), "missing checksum: strict (fail), warn or ignore; a mismatch always fails")
}

// request builds a resolver.Request; extra are positional coordinates.
func (f *resolveFlags) request(extra ...string) (resolver.Request, error) {
	switch f.conflict {
	case resolver.ConflictLatest, resolver.ConflictNearest:
	default:
		return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "--conflict %q: must be latest or nearest", f.conflict)
	}
	switch f.checksumPolicy {
	case resolver.ChecksumStrict, resolver.ChecksumWarn, resolver.ChecksumIgnore:
	default:
		return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "--checksum-policy %q: must be strict, warn or ignore", f.checksumPolicy)
	}
	cache := f.cache
	if cache != "" {
		// Jar paths handed to Spark must not depend on its working directory.
		abs, err := filepath.Abs(cache)
		if err != nil {
			return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "--cache %s: %v", f.cache, err)
		}
		cache = abs
	}
	return resolver.Request{
		Packages:              append(append([]string{}, f.packages...), extra...),
		Repositories:          f.repositories,
		Excludes:              f.excludes,
		NoDefaultRepositories: f.noDefaultRepositories,
		Settings:              f.settings,
		IvySettings:           f.ivySettings,
		IvyHome:               f.ivyHome,
		Conflict:              f.conflict,
		LockPath:              f.lock,
		Frozen:                f.frozen,
		Offline:               f.offline,
		CacheDir:              cache,
		ChecksumPolicy:        f.checksumPolicy,
	}, nil
}
