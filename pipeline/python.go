package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/pypi"
)

// PythonRequest is the Python half of a resolution: an input file
// (requirements, pyproject.toml, pylock.toml or uv.lock: pypi.Read picks
// by name) and the target the wheels are chosen for.
type PythonRequest struct {
	// Requirements is the input file.
	Requirements string
	// Version is the target's Python, major.minor ("3.11").
	Version string
	// Platform is the target's platform tag: manylinux_2_36_x86_64,
	// manylinux2014_aarch64, musllinux_1_2_x86_64 or linux_x86_64.
	Platform string
	// UserAgent is every index request's User-Agent
	// (repo.UserAgent(version)).
	UserAgent string
	// MaxRetryWait bounds a Retry-After wait (resolver.Request's
	// semantics: 0 is the default, negative waits for none).
	MaxRetryWait time.Duration
	// Log receives the notes of both halves (the resolver's, with the
	// lock's own path; the index client's retries). Nil: none.
	Log resolver.Logger
	// Getenv reads pip's configuration variables and uv's location
	// (nil: os.LookupEnv).
	Getenv func(string) (string, bool)
}

// PythonResult is a resolution of both halves.
type PythonResult struct {
	// Jars is the Maven half's result: its Lock holds the jars only
	// (Paths in its order).
	Jars *resolver.Result
	// Lock is the one lock of both halves (version 2 with wheels).
	Lock *lock.File
	// Wheels are the lock's wheels and WheelPaths their cache blobs, in
	// the same order.
	Wheels     []lock.Artifact
	WheelPaths []string
	// FromLock: both halves came from the lock, which was not written.
	FromLock bool
}

// ParsePythonTarget reads a target from a Python version ("3.11") and a
// platform tag (manylinux_2_36_x86_64,
// manylinux2014_x86_64, musllinux_1_2_aarch64, linux_x86_64). A bad
// value is errdefs.BadArgument naming the option.
func ParsePythonTarget(version, platform string) (pypi.Target, error) {
	var t pypi.Target
	parts := strings.Split(version, ".")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || strings.Trim(parts[0]+parts[1], "0123456789") != "" || len(version) > 7 {
		return t, errdefs.Optionf(errdefs.BadArgument, "pipeline.PythonRequest.Version", "python version %q: want major.minor, e.g. 3.11 (the image's python3)", version)
	}
	t.PythonVersion = version
	bad := func() error {
		return errdefs.Optionf(errdefs.BadArgument, "pipeline.PythonRequest.Platform", "python platform %q: want a Linux platform tag: manylinux_2_36_x86_64 (glibc 2.36), manylinux2014_x86_64, musllinux_1_2_x86_64 or linux_x86_64", platform)
	}
	glibcOf := func(maj, min string) string { return maj + "." + min }
	switch {
	case strings.HasPrefix(platform, "manylinux_"), strings.HasPrefix(platform, "musllinux_"):
		f := strings.SplitN(platform, "_", 4)
		if len(f) != 4 || f[1] == "" || f[2] == "" || strings.Trim(f[1]+f[2], "0123456789") != "" || f[3] == "" {
			return t, bad()
		}
		t.Platform = f[3]
		if f[0] == "manylinux" {
			t.Glibc = glibcOf(f[1], f[2])
		} else {
			t.Musl = glibcOf(f[1], f[2])
		}
	case strings.HasPrefix(platform, "manylinux2014_"):
		t.Platform, t.Glibc = strings.TrimPrefix(platform, "manylinux2014_"), "2.17"
	case strings.HasPrefix(platform, "manylinux2010_"):
		t.Platform, t.Glibc = strings.TrimPrefix(platform, "manylinux2010_"), "2.12"
	case strings.HasPrefix(platform, "manylinux1_"):
		t.Platform, t.Glibc = strings.TrimPrefix(platform, "manylinux1_"), "2.5"
	case strings.HasPrefix(platform, "linux_"):
		t.Platform = strings.TrimPrefix(platform, "linux_")
	default:
		return t, bad()
	}
	if t.Platform == "" || strings.Trim(t.Platform, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return t, bad()
	}
	if _, err := t.Tags(); err != nil {
		return t, bad()
	}
	return t, nil
}

// platformTags are the target's platform tags, most specific first.
func platformTags(t pypi.Target) ([]string, error) {
	tags, err := t.Tags()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, tag := range tags {
		if tag.Platform != "any" && !slices.Contains(out, tag.Platform) {
			out = append(out, tag.Platform)
		}
	}
	return out, nil
}

// ResolveWithPython resolves req's jars (resolver.Resolve, with the lock
// at req.LockPath seen through its jar half) and py's wheels, and writes
// ONE lock of both to req.LockPath (version 2: lock.SchemaVersionKinds).
// With a nil py it is resolver.Resolve (a jar-only lock, version 1,
// byte for byte).
//
// The Python half comes from the lock, with no index request, when the
// lock's inputs.python are the request's and every wheel blob is in the
// cache (each checked by its sha256); a missing blob is fetched by the
// lock's file name and digest. Otherwise, with req.Frozen, the lock is
// stale (errdefs.Stale, 78); with req.Offline nothing can be resolved
// (errdefs.Unavailable, 69); else the input is resolved for the target:
// a fully pinned input (pypi.Input.FullyPinned) by the index alone, any
// other by uv first.
func ResolveWithPython(ctx context.Context, req resolver.Request, py *PythonRequest, opts ...resolver.Option) (*PythonResult, error) {
	if py == nil {
		res, err := resolver.Resolve(ctx, req, opts...)
		if err != nil {
			return nil, err
		}
		return &PythonResult{Jars: res, Lock: res.Lock, FromLock: res.FromLock}, nil
	}
	target, err := ParsePythonTarget(py.Version, py.Platform)
	if err != nil {
		return nil, err
	}
	getenv := py.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	in, err := pypi.Read(ctx, py.Requirements, pypi.WithGetenv(getenv))
	if err != nil {
		return nil, err
	}
	cfg, err := pypi.LoadIndexConfig(ctx, pypi.WithConfigEnv(getenv), pypi.WithPipDefaultMemo(cache.Dir(req.CacheDir)))
	if err != nil {
		return nil, err
	}
	pyIn, err := pythonInputs(in, cfg, target)
	if err != nil {
		return nil, err
	}

	old, err := readLock(req.LockPath)
	if err != nil {
		return nil, err
	}
	var wheels []lock.Artifact
	pyFromLock := false
	if old != nil && old.Inputs.Python.Equal(&pyIn) && lockedHashesAllowed(old.Wheels(), in) {
		wheels, pyFromLock = old.Wheels(), true
	}
	// Before anything is fetched: a frozen or offline run cannot resolve
	// the Python half again.
	switch {
	case pyFromLock:
	case req.Frozen && old == nil:
		return nil, errdefs.Optionf(errdefs.Stale, "resolver.Request.Frozen", "frozen: needs a lockfile matching the inputs (%s: none)", req.LockPath)
	case req.Frozen:
		return nil, errdefs.Optionf(errdefs.Stale, "resolver.Request.Frozen", "lockfile %s is stale: python inputs changed from %s to %s", req.LockPath, old.Inputs.Python, &pyIn)
	case req.Offline:
		return nil, errdefs.Optionf(errdefs.Unavailable, "resolver.Request.Offline", "offline: the Python input %s is not locked (no lock with these python inputs at %q): resolving it asks the index", py.Requirements, req.LockPath)
	}
	jars, err := resolveJarHalf(ctx, req, old, py.Log, opts)
	if err != nil {
		return nil, err
	}

	req.CacheDir = cache.Dir(req.CacheDir)
	if pyFromLock {
		if err := cachedWheels(ctx, cfg, req, py, wheels, target); err != nil {
			return nil, err
		}
	} else {
		if wheels, err = fetchWheels(ctx, cfg, req, py, in, target); err != nil {
			return nil, err
		}
	}

	lf := &lock.File{Inputs: jars.Lock.Inputs, Artifacts: append(slices.Clone(jars.Lock.Artifacts), wheels...)}
	lf.Inputs.Python = &pyIn
	lf.Normalize()
	if err := lf.Check(); err != nil {
		return nil, err
	}
	fromLock := jars.FromLock && pyFromLock && old != nil && old.Hash() == lf.Hash() && old.Inputs.InputsHash == lf.Inputs.InputsHash
	if req.Frozen && old != nil && old.Hash() == lf.Hash() {
		// Frozen never writes: only the repositories changed (the jar
		// half holds by content), and the lock is kept as it is.
		fromLock = true
	}
	if req.LockPath != "" && !fromLock {
		if err := lock.Write(req.LockPath, lf); err != nil {
			return nil, err
		}
	}
	if fromLock {
		lf = old
	}
	res := &PythonResult{Jars: jars, Lock: lf, Wheels: lf.Wheels(), FromLock: fromLock}
	for _, w := range res.Wheels {
		res.WheelPaths = append(res.WheelPaths, cache.BlobPath(req.CacheDir, w.Sha256))
	}
	return res, nil
}

// readLock reads the lock at path: nil, nil when path is "" or names no
// file.
func readLock(path string) (*lock.File, error) {
	if path == "" {
		return nil, nil
	}
	lf, err := lock.Read(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return lf, err
}

// cachedWheels makes sure every locked wheel is in req.CacheDir (each
// checked by its sha256): a missing one is fetched by the lock's file name
// and digest, as a pylock.toml, unless req.Offline.
func cachedWheels(ctx context.Context, cfg *pypi.IndexConfig, req resolver.Request, py *PythonRequest, wheels []lock.Artifact, target pypi.Target) error {
	missing := false
	for _, w := range wheels {
		if err := cache.VerifyBlob(req.CacheDir, w.Sha256, w.Size); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			missing = true
		}
	}
	if !missing {
		return nil
	}
	if req.Offline {
		return errdefs.Optionf(errdefs.Unavailable, "resolver.Request.Offline", "offline: a wheel of lockfile %s is not in the cache %s; a run that may reach the index fetches it", req.LockPath, req.CacheDir)
	}
	got, err := fetchWheels(ctx, cfg, req, py, lockedInput(req.LockPath, wheels), target)
	if err != nil {
		return err
	}
	if !sameWheels(got, wheels) {
		return errdefs.Errorf(errdefs.Invalid, "lockfile %s: the wheels fetched again are not the lock's", req.LockPath)
	}
	return nil
}

// LockedWheels gives the cache blobs of lf's wheels (index for index of
// lf.Wheels()) for a bake of a lock alone (layers.BakeInput.Wheels,
// s3store.WithWheels): each blob is checked by its sha256, and a missing
// one is fetched by the lock's file name and digest from the index
// configuration (pip's, read through py.Getenv), for the target the lock
// records; with req.Offline a missing one is errdefs.Unavailable.
// req.LockPath names the lock in errors and req.CacheDir is the cache; py
// may be nil (no User-Agent, no log).
func LockedWheels(lf *lock.File, req resolver.Request, py *PythonRequest) lock.Jars {
	return func(ctx context.Context) ([]string, error) {
		if py == nil {
			py = &PythonRequest{}
		}
		wheels := lf.Wheels()
		req.CacheDir = cache.Dir(req.CacheDir)
		out := make([]string, 0, len(wheels))
		for _, w := range wheels {
			out = append(out, cache.BlobPath(req.CacheDir, w.Sha256))
		}
		target, err := LockTarget(lf)
		if err != nil {
			return nil, err
		}
		getenv := py.Getenv
		if getenv == nil {
			getenv = os.LookupEnv
		}
		cfg, err := pypi.LoadIndexConfig(ctx, pypi.WithConfigEnv(getenv))
		if err != nil {
			return nil, err
		}
		if err := cachedWheels(ctx, cfg, req, py, wheels, target); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// LockTarget is the target a lock's wheels were chosen for (its
// inputs.python: the version and the first, most specific, platform tag).
// A lock without inputs.python is errdefs.Invalid.
func LockTarget(lf *lock.File) (pypi.Target, error) {
	p := lf.Inputs.Python
	if p == nil || len(p.Platforms) == 0 {
		return pypi.Target{}, errdefs.Errorf(errdefs.Invalid, "lock %s: wheels without inputs.python (the target they were chosen for)", lf.Hash())
	}
	return ParsePythonTarget(p.Version, p.Platforms[0])
}

// JarHalf is lf's jar half: its jars, and its inputs without
// inputs.python (a version 1 lock), what a Maven fetch reads
// (LockedJars).
func JarHalf(lf *lock.File) *lock.File {
	view := &lock.File{Inputs: lf.Inputs, Artifacts: lf.Jars()}
	view.Inputs.Python = nil
	return view
}

// resolveJarHalf runs resolver.Resolve against the jar half of the lock
// old (its jars and inputs without inputs.python, a version 1 lock
// written to a temporary file): the resolver checks, reuses or resolves
// the jars as for a jar-only lock, and the one lock is written by the
// caller. Its errors name req.LockPath, not the temporary file.
func resolveJarHalf(ctx context.Context, req resolver.Request, old *lock.File, log resolver.Logger, opts []resolver.Option) (*resolver.Result, error) {
	if !HasCoordinate(req.Packages) {
		// A Python half alone: no jar, no repository asked.
		conflict := req.Conflict
		if conflict == "" {
			conflict = resolver.ConflictLatest
		}
		in := lock.Inputs{Conflict: conflict, Packages: []string{}, Repositories: []string{}, Excludes: []string{}}
		fromLock := old != nil && len(old.Jars()) == 0 && len(old.Inputs.Packages) == 0 && len(old.Inputs.Excludes) == 0 &&
			len(old.Inputs.Repositories) == 0 && old.Inputs.Conflict == conflict && old.Inputs.Ivy == ""
		return &resolver.Result{Lock: &lock.File{Inputs: in, Artifacts: []lock.Artifact{}}, FromLock: fromLock}, nil
	}
	real := req.LockPath
	if real != "" {
		dir, err := os.MkdirTemp("", "prebake-jars-")
		if err != nil {
			return nil, errdefs.New(errdefs.CantWrite, err)
		}
		defer os.RemoveAll(dir)
		req.LockPath = filepath.Join(dir, filepath.Base(real))
		if log != nil {
			opts = append(slices.Clone(opts), resolver.WithLogger(renamingLogger{log, req.LockPath, real}))
		}
		if old != nil {
			if err := lock.Write(req.LockPath, JarHalf(old)); err != nil {
				return nil, err
			}
		}
	}
	res, err := resolver.Resolve(ctx, req, opts...)
	if err != nil {
		if real != "" {
			return nil, renamed{err, req.LockPath, real}
		}
		return nil, err
	}
	return res, nil
}

// renamingLogger logs to l with the path from replaced by to.
type renamingLogger struct {
	l        resolver.Logger
	from, to string
}

func (r renamingLogger) Printf(format string, args ...any) {
	r.l.Printf("%s", strings.ReplaceAll(fmt.Sprintf(format, args...), r.from, r.to))
}

// HasCoordinate reports whether the packages (comma-separated lists, as
// spark-submit's) hold a coordinate: Spark drops empty entries, so ","
// holds none.
func HasCoordinate(packages []string) bool {
	for _, p := range packages {
		for _, c := range strings.Split(p, ",") {
			if strings.TrimSpace(c) != "" {
				return true
			}
		}
	}
	return false
}

// renamed is err with the path from replaced by to in its message (kinds
// and wrapped errors kept).
type renamed struct {
	err      error
	from, to string
}

func (e renamed) Error() string { return strings.ReplaceAll(e.err.Error(), e.from, e.to) }
func (e renamed) Unwrap() error { return e.err }

// pythonInputs are the lock's inputs.python of in for t: requirements as
// written (a lock's pins as name==version), the indexes and find-links
// without userinfo, the version and the platform tags.
func pythonInputs(in *pypi.Input, cfg *pypi.IndexConfig, t pypi.Target) (lock.PythonInputs, error) {
	plats, err := platformTags(t)
	if err != nil {
		return lock.PythonInputs{}, err
	}
	p := lock.PythonInputs{Version: t.PythonVersion, Platforms: plats, Indexes: []string{}, Requirements: []string{}}
	for _, r := range in.Requirements {
		p.Requirements = append(p.Requirements, r.String())
	}
	for _, pin := range in.Pinned {
		s := pin.Name + "==" + pin.Version
		if !pin.Marker.IsZero() {
			s += "; " + pin.Marker.String()
		}
		p.Requirements = append(p.Requirements, s)
	}
	var urls []string
	if !cfg.NoIndex {
		urls = append(urls, cfg.IndexURL)
		urls = append(urls, cfg.ExtraIndexURLs...)
	}
	urls = append(urls, cfg.FindLinks...)
	for _, u := range urls {
		p.Indexes = append(p.Indexes, sourceURL(u))
	}
	return p, nil
}

// sourceURL is an index or find-links entry as a lock records it: a URL
// without userinfo; a directory as a file: URL of its absolute path.
func sourceURL(s string) string {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "file") {
		u.User = nil
		return u.String()
	}
	if abs, err := filepath.Abs(s); err == nil {
		s = abs
	}
	return (&url.URL{Scheme: "file", Path: s}).String()
}

// lockedHashesAllowed reports whether every locked wheel's sha256 is one
// its requirement's --hash lines allow (a requirement without sha256
// hashes allows any): a changed --hash makes the lock stale although the
// requirement strings are the same.
func lockedHashesAllowed(wheels []lock.Artifact, in *pypi.Input) bool {
	allowed := map[string]map[string]bool{}
	for _, r := range in.Requirements {
		for _, h := range r.Hashes {
			if algo, sum, ok := strings.Cut(strings.ToLower(h), ":"); ok && algo == "sha256" {
				if allowed[r.Name] == nil {
					allowed[r.Name] = map[string]bool{}
				}
				allowed[r.Name][sum] = true
			}
		}
	}
	for _, p := range in.Pinned {
		for _, w := range p.Wheels {
			if allowed[p.Name] == nil {
				allowed[p.Name] = map[string]bool{}
			}
			allowed[p.Name][strings.ToLower(w.SHA256)] = true
		}
	}
	for _, w := range wheels {
		if a := allowed[w.Name]; a != nil && !a[w.Sha256] {
			return false
		}
	}
	return true
}

// lockedInput is a lock's wheels as a pylock.toml input: each package at
// its version, the lock's file and digest.
func lockedInput(path string, wheels []lock.Artifact) *pypi.Input {
	in := &pypi.Input{Format: pypi.FormatPylock, File: path}
	for _, w := range wheels {
		in.Pinned = append(in.Pinned, pypi.Pin{Name: w.Name, Version: w.Version, Index: w.Repository,
			Wheels: []pypi.PinnedWheel{{Name: w.File, SHA256: w.Sha256, Size: w.Size}}, Origin: pypi.Origin{File: path}})
	}
	return in
}

func sameWheels(a, b []lock.Artifact) bool {
	key := func(ws []lock.Artifact) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.File+"\x00"+w.Sha256)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// fetchWheels resolves in for t (pypi.Resolver) into the cache and maps
// each wheel to a lock artifact.
func fetchWheels(ctx context.Context, cfg *pypi.IndexConfig, req resolver.Request, py *PythonRequest, in *pypi.Input, t pypi.Target) ([]lock.Artifact, error) {
	c, err := cache.Open(req.CacheDir, false, nil)
	if err != nil {
		return nil, err
	}
	wait := py.MaxRetryWait
	switch {
	case wait == 0:
		wait = pypi.DefaultMaxRetryAfter
	case wait < 0:
		wait = 0
	}
	ua := py.UserAgent
	if ua == "" {
		ua = "prebake"
	}
	copts := []pypi.ClientOption{pypi.WithUserAgent(ua), pypi.WithRetries(pypi.DefaultAttempts, wait)}
	if py.Log != nil {
		copts = append(copts, pypi.WithLogger(py.Log))
	}
	cl, err := pypi.NewClient(cfg, copts...)
	if err != nil {
		return nil, err
	}
	getenv := py.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	r, err := pypi.NewResolver(cfg, c, pypi.WithIndexClient(cl), pypi.WithUVEnv(getenv))
	if err != nil {
		return nil, err
	}
	ws, err := r.Resolve(ctx, in, t)
	if err != nil {
		return nil, err
	}
	out := make([]lock.Artifact, 0, len(ws))
	for _, w := range ws {
		v := w.Version
		if wf, err := wheel.ParseFilename(w.File); err == nil {
			v = strings.ToLower(wf.Version)
		}
		out = append(out, lock.Artifact{Kind: lock.KindWheel, Name: lock.NormalizeProject(w.Name), Version: v, File: w.File,
			Sha256: w.Sha256, Size: w.Size, Repository: sourceURL(w.Index)})
	}
	return out, nil
}

// PythonSummary is a one-line account of a lock's wheels for a log.
func PythonSummary(lf *lock.File) string {
	return fmt.Sprintf("%d jars, %d wheels", len(lf.Jars()), len(lf.Wheels()))
}

// PythonTargetFromImage reads the target a job's wheels are chosen for
// from the image it runs on (layers.InspectPython): python3's major.minor,
// and the platform tag of the image's C library and machine
// (manylinux_2_36_x86_64 for glibc 2.36 on amd64, musllinux_1_2_aarch64
// for musl on arm64). An image without python3 or without a C library
// found is errdefs.BadArgument for the option
// "pipeline.PythonTargetFromImage" (the target must then be given), naming
// the image; a missing image errdefs.NotFound.
func PythonTargetFromImage(ctx context.Context, image string, opts ...layers.Option) (pypi.Target, error) {
	ip, err := layers.InspectPython(ctx, image, opts...)
	if err != nil {
		if errdefs.KindOf(err) == errdefs.BadArgument {
			return pypi.Target{}, errdefs.Optionf(errdefs.BadArgument, OptionPythonTargetFromImage,
				"the wheels' target cannot be read from the image: %w; give the target's Python version and platform tag, or run an image with python3", err)
		}
		return pypi.Target{}, err
	}
	return ParsePythonTarget(ip.Version, ImagePlatformTag(ip))
}

// OptionPythonTargetFromImage is the option of PythonTargetFromImage's
// errors for an image whose target cannot be read.
const OptionPythonTargetFromImage = "pipeline.PythonTargetFromImage"

// ImagePlatformTag is the platform tag of an image's C library and
// machine: manylinux_X_Y_MACHINE for glibc X.Y, musllinux_X_Y_MACHINE
// for musl, linux_MACHINE for neither.
func ImagePlatformTag(ip *layers.ImagePython) string {
	tag := func(kind, v string) string {
		return kind + "_" + strings.ReplaceAll(v, ".", "_") + "_" + ip.Machine
	}
	switch {
	case ip.Glibc != "":
		return tag("manylinux", ip.Glibc)
	case ip.Musl != "":
		return tag("musllinux", ip.Musl)
	}
	return "linux_" + ip.Machine
}

// PythonPlatformTag is t's platform tag, the most specific
// (manylinux_2_36_x86_64): the platform option's spelling.
func PythonPlatformTag(t pypi.Target) string {
	tags, err := platformTags(t)
	if err != nil || len(tags) == 0 {
		return ""
	}
	return tags[0]
}
