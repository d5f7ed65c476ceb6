package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prebake/prebake/lock"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
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
	verifySignatures      bool
	keyring               string
	// maxRetryWait bounds the Retry-After waits of one repository request
	// (--max-retry-wait): a longer one fails at once (429: exit 76).
	maxRetryWait time.Duration
	// python is the Python half (--py-requirements, --python-version,
	// --python-platform): read by the commands that set pythonWired,
	// refused by the others (addPython).
	python      pythonFlags
	pythonWired bool
	// sparkVersion: resolve's and rewrite's --spark-version (addSparkVersion;
	// submit has its own flag of that name).
	sparkVersion string
	// ivyVersion is --ivy-version: the Ivy to follow, "" for the line's.
	ivyVersion string
}

// addSparkVersion defines --spark-version: the Spark line whose Ivy the
// resolution follows.
func (f *resolveFlags) addSparkVersion(fs *pflag.FlagSet) {
	fs.StringVar(&f.sparkVersion, "spark-version", "", "the Spark version whose Ivy to follow (e.g. 3.5.0: before 3.5.9, Ivy 2.5.1 drops a POM dependency beside the same one with a classifier, IVY-1642); default Ivy 2.5.2+ (3.5.9+, 4.x)")
}

// add defines the resolution flags on fs, except those named in without
// (warm takes packages and locks from its sets file).
func (f *resolveFlags) add(into *pflag.FlagSet, without ...string) {
	fs := pflag.NewFlagSet("resolve", pflag.ContinueOnError)
	defer fs.VisitAll(func(fl *pflag.Flag) {
		if !slices.Contains(without, fl.Name) {
			into.AddFlag(fl)
		}
	})
	fs.StringArrayVar(&f.packages, "packages", nil, "comma-separated Maven coordinates g:a:v, as spark-submit --packages")
	fs.StringArrayVar(&f.repositories, "repositories", nil, "comma-separated extra repository URLs (http, https, file; user:pass@ allowed), as spark-submit --repositories")
	fs.StringArrayVar(&f.excludes, "exclude-packages", nil, "comma-separated g:a (globs allowed) to exclude, as spark-submit --exclude-packages")
	fs.BoolVar(&f.noDefaultRepositories, "no-default-repositories", false, "drop ~/.m2/repository, Central and spark-packages from the chain")
	fs.StringVar(&f.settings, "settings", "", "Maven settings.xml for mirrors and server credentials")
	fs.StringVar(&f.ivySettings, "ivy-settings", "", "Ivy settings file whose resolvers replace the default chain, as spark.jars.ivySettings")
	fs.StringVar(&f.ivyHome, "ivy", "", "Ivy user directory, as spark.jars.ivy (prebake keeps its own cache; see docs/design.md)")
	fs.StringVar(&f.ivyVersion, "ivy-version", "", "the Ivy to follow: "+strings.Join(resolver.KnownIvyVersions, ", ")+" (default the Spark line's: 2.5.1 before 3.5.9, else 2.5.3); 2.6.0 matches dependencyManagement by type and classifier (IVY-1654), ahead of Spark; the lock records it")
	fs.StringVar((*string)(&f.conflict), "conflict", string(resolver.ConflictLatest), "conflict rule: latest (Spark/Ivy) or nearest (Maven)")
	fs.StringVar(&f.lock, "lock", "", "lockfile: used when it matches the inputs, written after a resolution")
	fs.BoolVar(&f.frozen, "frozen", false, "fail (exit 78) when the lock is missing or stale instead of resolving")
	fs.BoolVar(&f.offline, "offline", false, "make no network request; use only the cache")
	fs.StringVar(&f.cache, "cache", "", "cache directory (default $PREBAKE_CACHE, else the user cache dir + /prebake)")
	fs.StringVar((*string)(&f.checksumPolicy), "checksum-policy", string(resolver.ChecksumWarn), "missing checksum: strict (fail), warn or ignore; a mismatch always fails")
	fs.BoolVar(&f.verifySignatures, "verify-signatures", false, "verify every jar's PGP signature (.asc) against --keyring and record its signer in the lock (exit 65 naming the jar when one is missing or bad)")
	fs.StringVar(&f.keyring, "keyring", defaultKeyring, "armored public keys pinned for --verify-signatures (see prebake keys)")
	if pythonCommands[into.Name()] {
		f.addPython(fs)
	}
	durationVar(fs, &f.maxRetryWait, "max-retry-wait", repo.DefaultMaxRetryWait, "longest a repository request waits, in all, for the Retry-After of a 429 or 503; a longer one (Maven Central's blocks say 1800s) fails at once, a 429 with exit 76 and when to retry; 0 waits for none")
}

// pythonCommands name (by flag set: a cobra command's name) the commands
// the Python half applies to: resolve, bake image, bake s3 and warm read
// it (pythonWired, set in each command's file), the others refuse its
// flags until they read it too. Doctor, why, outdated and the
// like do not take them.
var pythonCommands = map[string]bool{"init": true, "resolve": true, "image": true, "s3": true, "rewrite": true, "submit": true, "warm": true}

// pythonFlags are the Python half's flags.
type pythonFlags struct {
	requirements, version, platform string
}

// set reports whether any Python flag has a value.
func (p pythonFlags) set() bool { return p.requirements != "" || p.version != "" || p.platform != "" }

// pythonFlag is a Python flag's value: a command that does not read the
// Python half yet refuses it (exit 64) instead of ignoring it.
type pythonFlag struct {
	dst   *string
	wired *bool
	name  string
}

func (v pythonFlag) String() string { return *v.dst }
func (v pythonFlag) Type() string   { return "string" }
func (v pythonFlag) Set(s string) error {
	if !*v.wired {
		return fmt.Errorf("--%s: this command takes the Python half per set, not from flags or prebake.yaml: give each set of the sets file its own python: {requirements, version, platform} (or a lock with wheels), and run it without the Python flags (and without the python keys of prebake.yaml)", v.name)
	}
	*v.dst = s
	return nil
}

// addPython defines the Python half's flags (see the conventions: one
// definition for every command that resolves).
func (f *resolveFlags) addPython(fs *pflag.FlagSet) {
	for _, d := range []struct {
		dst         *string
		name, usage string
	}{
		{&f.python.requirements, "py-requirements", "the job's Python dependencies: a requirements file (pins, ranges, markers, --hash lines), pyproject.toml, pylock.toml or uv.lock (chosen by name); its wheels go into the same lock as the jars"},
		{&f.python.version, "python-version", "the target's Python, major.minor (e.g. 3.11): override of the image's python3 the wheels are chosen for"},
		{&f.python.platform, "python-platform", "the target's platform tag (e.g. manylinux_2_36_x86_64 for glibc 2.36 on x86_64; musllinux_1_2_aarch64, linux_x86_64): override of the image's"},
	} {
		usage := d.usage
		if !f.pythonWired {
			usage = "not read by this command: each set of the sets file carries its own python: {requirements, version, platform}"
		}
		fs.Var(pythonFlag{dst: d.dst, wired: &f.pythonWired, name: d.name}, d.name, usage)
	}
}

// pythonRequest is the Python half of the request (nil when no Python
// flag is given): a Python input needs the target (both --python-version
// and --python-platform; resolve has no image to read it from), 64
// otherwise.
func (f *resolveFlags) pythonRequest(maxRetryWait time.Duration) (*pipeline.PythonRequest, error) {
	return f.pythonRequestWith(maxRetryWait, func(p pythonFlags) (string, string, error) {
		return "", "", exitcode.Errorf(exitcode.Usage, "--py-requirements %s: needs the target: --python-version (the image's python3 major.minor: docker run IMAGE python3 -V) and --python-platform (its glibc and machine as a tag, e.g. manylinux_2_36_x86_64: docker run IMAGE ldd --version)", p.requirements)
	})
}

// pythonRequestWith is pythonRequest with the target, when neither
// --python-version nor --python-platform is given, from target (the job's
// image, the lock): its version and platform tag.
func (f *resolveFlags) pythonRequestWith(maxRetryWait time.Duration, target func(pythonFlags) (version, platform string, err error)) (*pipeline.PythonRequest, error) {
	p := f.python
	if !p.set() {
		return nil, nil
	}
	if p.requirements == "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--python-version and --python-platform name the target of --py-requirements FILE, which is missing")
	}
	switch {
	case p.version == "" && p.platform == "":
		v, pl, err := target(p)
		if err != nil {
			return nil, err
		}
		p.version, p.platform = v, pl
	case p.version == "" || p.platform == "":
		return nil, exitcode.Errorf(exitcode.Usage, "--py-requirements %s: --python-version and --python-platform go together (the target's Python and platform tag); give both, or neither to read them from the image", p.requirements)
	}
	return &pipeline.PythonRequest{Requirements: p.requirements, Version: p.version, Platform: p.platform,
		UserAgent: repo.UserAgent(buildVersion()), MaxRetryWait: maxRetryWait}, nil
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
	if _, err := resolver.IvyOf(f.sparkVersion); err != nil {
		return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "--spark-version: %v", err)
	}
	if _, err := resolver.EffectiveIvy(f.sparkVersion, f.ivyVersion); err != nil {
		return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "--ivy-version: %v", err)
	}
	if f.maxRetryWait < 0 {
		return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "--max-retry-wait %s: must not be negative", f.maxRetryWait)
	}
	maxRetryWait := f.maxRetryWait
	if maxRetryWait == 0 {
		maxRetryWait = -1 // the resolver's "wait for none"; its 0 is the default
	}
	verifier, err := f.signatures()
	if err != nil {
		return resolver.Request{}, err
	}
	home, defaultRepo := chainEnv()
	return resolver.Request{
		Home:                      home,
		DefaultArtifactRepository: defaultRepo,
		SparkVersion:              f.sparkVersion,
		IvyVersion:                f.ivyVersion,
		Signatures:                verifier,
		Packages:                  append(append([]string{}, f.packages...), extra...),
		Repositories:              f.repositories,
		Excludes:                  f.excludes,
		NoDefaultRepositories:     f.noDefaultRepositories,
		Settings:                  f.settings,
		IvySettings:               f.ivySettings,
		IvyHome:                   f.ivyHome,
		Conflict:                  f.conflict,
		LockPath:                  f.lock,
		Frozen:                    f.frozen,
		Offline:                   f.offline,
		CacheDir:                  cache,
		ChecksumPolicy:            f.checksumPolicy,
		UserAgent:                 repo.UserAgent(buildVersion()),
		MaxRetryWait:              maxRetryWait,
	}, nil
}

// chainEnv is what Spark's repository chain takes from the environment:
// the home holding .m2/repository and $DEFAULT_ARTIFACT_REPOSITORY. The
// resolver reads no environment; every request cmd builds carries them.
func chainEnv() (home, defaultArtifactRepository string) {
	home, _ = os.UserHomeDir()
	return home, os.Getenv(repo.EnvDefaultArtifactRepository)
}

// defaultKeyring is the keyring --verify-signatures and prebake keys use
// without --keyring: next to prebake.lock, to be committed with it.
const defaultKeyring = "prebake-keyring.asc"

// signatures reads the pinned keyring when signatures are to be verified
// (nil otherwise): 66 when it is missing, 65 when it holds no key.
func (f *resolveFlags) signatures() (resolver.SignatureVerifier, error) {
	if !f.verifySignatures {
		return nil, nil
	}
	if f.keyring == "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--verify-signatures: needs --keyring FILE")
	}
	kr, err := pgpverify.ReadKeyring(f.keyring)
	if err != nil {
		return nil, fmt.Errorf("--verify-signatures: %w (add keys with: prebake keys add --keyring %s KEYFILE)", err, f.keyring)
	}
	return kr, nil
}

// lockRequest is request, except that with no coordinate given and a
// --lock, the lock's own inputs (packages, excludes, conflict mode) are
// resolved again: `prebake resolve --lock prebake.lock` refreshes a lock
// as `bake --lock` reads one. The repositories are the current ones (flags,
// environment, prebake.yaml), so a refreshed lock matches what submit and
// rewrite will ask for. fs tells which flags were given.
func (f *resolveFlags) lockRequest(fs *pflag.FlagSet, what string, extra ...string) (resolver.Request, error) {
	if f.lock != "" && !hasCoordinate(f.packages) && !hasCoordinate(extra) {
		lock, err := lock.Read(f.lock)
		if err != nil && !(f.python.set() && errors.Is(err, os.ErrNotExist)) {
			return resolver.Request{}, err
		}
		if lock == nil { // a Python half alone, and no lock yet
			return f.request(extra...)
		}
		f.packages = lock.Inputs.Packages
		if !fs.Changed("exclude-packages") && len(f.excludes) == 0 {
			f.excludes = lock.Inputs.Excludes
		}
		if !fs.Changed("conflict") && lock.Inputs.Conflict != "" {
			f.conflict = lock.Inputs.Conflict
		}
	}
	req, err := f.request(extra...)
	if err != nil {
		return req, err
	}
	if !hasCoordinate(req.Packages) && !f.python.set() {
		return req, exitcode.Errorf(exitcode.Usage, "%s: no coordinate to resolve; give group:artifact:version as arguments or with --packages, or --lock FILE to resolve a lock's own packages again", what)
	}
	return req, nil
}
