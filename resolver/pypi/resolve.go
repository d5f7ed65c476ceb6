package pypi

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/resolver/cache"
)

// Target is the Python of the image a job runs on: its wheel tags
// (wheel.Target) and its full version for markers.
type Target struct {
	wheel.Target
	// PythonFullVersion is "3.11.2"; "" stands for PythonVersion.0.
	PythonFullVersion string
}

// machine is the target's platform in Python's spelling.
func (t Target) machine() string {
	switch t.Platform {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return t.Platform
}

func (t Target) fullVersion() string {
	if t.PythonFullVersion != "" {
		return t.PythonFullVersion
	}
	return t.PythonVersion + ".0"
}

// Env is the marker environment of the target (a CPython on Linux).
func (t Target) Env() Env {
	e := LinuxEnv(t.fullVersion(), t.machine())
	if t.Implementation == "pp" {
		e.PlatformPythonImplementation, e.ImplementationName = "PyPy", "pypy"
	}
	return e
}

// Wheel is one wheel chosen for a target and fetched into the cache.
type Wheel struct {
	// Name is the normalized project name, Version the version as the
	// wheel's file name says it.
	Name    string
	Version string
	// File is the wheel's file name.
	File string
	// URL is where it was fetched from, without userinfo (a find-links
	// file's path for a local wheel).
	URL    string
	Sha256 string
	Size   int64
	// RequiresPython is the index's requires-python for the file.
	RequiresPython string
	// Index is the index or find-links entry that served it, without
	// userinfo.
	Index string
	// Path is the blob in the cache.
	Path string
}

// ErrSdistOnly is matched (errors.Is) by a package version with no wheel
// at all: prebake installs no source distribution.
var ErrSdistOnly = errors.New("only a source distribution")

// ErrNoWheel is matched (errors.Is) by a package version whose wheels
// all fit other targets.
var ErrNoWheel = errors.New("no wheel for the target")

// ErrHashMismatch is matched (errors.Is) by a file whose digest is not
// the one the index, the requirements' --hash or the lock gives.
var ErrHashMismatch = errors.New("hash mismatch")

// Option configures a Resolver.
type Option func(*options) error

type options struct {
	client  *Client
	getenv  func(string) (string, bool)
	workers int
}

// WithIndexClient sets the index client (the default NewClient(cfg)).
func WithIndexClient(cl *Client) Option {
	return func(o *options) error { o.client = cl; return nil }
}

// WithUV sets how uv is found (see FindUV): its environment lookup.
func WithUVEnv(getenv func(string) (string, bool)) Option {
	return func(o *options) error { o.getenv = getenv; return nil }
}

// WithConcurrency bounds the page reads and downloads in flight (default 4).
func WithConcurrency(n int) Option {
	return func(o *options) error { o.workers = max(1, n); return nil }
}

// makeOptions sets the defaults, then applies opts; the first option error
// stops it.
func makeOptions(opts []Option) (*options, error) {
	o := &options{getenv: os.LookupEnv, workers: 4}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Resolver picks and fetches the wheels of an Input for a Target.
type Resolver struct {
	cfg   *IndexConfig
	cache *cache.Cache
	options
}

// NewResolver returns a resolver reaching the indexes of cfg and storing
// wheels in c.
func NewResolver(cfg *IndexConfig, c *cache.Cache, opts ...Option) (*Resolver, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	r := &Resolver{cfg: cfg, cache: c, options: *o}
	if r.client == nil {
		cl, err := NewClient(cfg)
		if err != nil {
			return nil, err
		}
		r.client = cl
	}
	return r, nil
}

// pinned is one package at one version to fetch.
type pinned struct {
	name    string
	version Version
	// hashes are the allowed digests ("sha256:<hex>"): --hash lines, or
	// the lock's wheels'.
	hashes []string
	// byFile are a lock's wheels: file name → sha256.
	byFile map[string]string
	origin Origin
}

// Resolve picks, for every package of in that the target installs (its
// markers evaluated for the target), the wheel the target loads best
// (wheel.Target.Best) among the non-yanked files of that exact version
// whose requires-python admits the target, from the find-links
// directories and the indexes together; and fetches each into the cache,
// checked against the index's sha256 and size and against the --hash
// lines or the lock's hashes. An input that is not fully pinned
// (Input.FullyPinned) is resolved by uv first (CompileWithUV). The wheels
// come back sorted by name.
//
// A version with only an sdist is ErrSdistOnly, one whose wheels fit
// other targets ErrNoWheel (both errdefs.NotFound, exit 66, naming the
// package, its origin and the way out); a digest mismatch ErrHashMismatch
// (errdefs.Invalid, exit 65).
func (r *Resolver) Resolve(ctx context.Context, in *Input, t Target) ([]Wheel, error) {
	if _, err := t.Tags(); err != nil {
		return nil, err
	}
	if !in.FullyPinned() {
		uv, err := FindUV(r.getenv)
		if err != nil {
			return nil, err
		}
		compiled, err := CompileWithUV(ctx, uv, in, t, r.cfg)
		if err != nil {
			return nil, err
		}
		keepHashes(in, compiled)
		in = compiled
	}
	pins, err := pinsOf(in, t.Env())
	if err != nil {
		return nil, err
	}
	// The project pages, side by side (bounded), then the choice.
	pages := make([][]candidate, len(pins))
	if err := r.parallel(len(pins), func(i int) (err error) {
		if pages[i], err = r.candidates(ctx, pins[i].name); err != nil {
			return fmt.Errorf("%s: %w", pins[i].name, err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	chosen := make([]choice, len(pins))
	for i, p := range pins {
		if chosen[i], err = choose(p, pages[i], t); err != nil {
			return nil, err
		}
	}
	wheels := make([]Wheel, len(chosen))
	if err := r.parallel(len(chosen), func(i int) (err error) {
		wheels[i], err = r.fetch(ctx, chosen[i])
		return err
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(wheels, func(a, b Wheel) int {
		return strings.Compare(a.Name+"\x00"+a.Version+"\x00"+a.File, b.Name+"\x00"+b.Version+"\x00"+b.File)
	})
	return wheels, nil
}

// parallel runs f(0..n-1), r.workers at a time, and joins the errors
// in index order.
func (r *Resolver) parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, r.workers)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pinsOf lists the packages in installs on the target.
func pinsOf(in *Input, env Env) ([]pinned, error) {
	var out []pinned
	seen := map[string]int{}
	add := func(p pinned) error {
		if i, ok := seen[p.name]; ok {
			if out[i].version.Compare(p.version) != 0 {
				return errdefs.New(errdefs.Invalid, &LineError{Origin: p.origin, Err: fmt.Errorf("%s==%s conflicts with %s==%s at %s", p.name, p.version, p.name, out[i].version, out[i].origin)})
			}
			out[i].hashes = append(out[i].hashes, p.hashes...)
			return nil
		}
		seen[p.name] = len(out)
		out = append(out, p)
		return nil
	}
	applies := func(m Marker, src Origin) (bool, error) {
		if m.IsZero() {
			return true, nil
		}
		ok, err := m.Evaluate(env, "")
		if err != nil {
			return false, lineError(src, err)
		}
		return ok, nil
	}
	switch in.Format {
	case FormatRequirements, FormatPyproject:
		for _, q := range in.Requirements {
			if ok, err := applies(q.Marker, q.Origin); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			v, ok := q.Specifiers.Pinned()
			if !ok {
				return nil, lineErrorf(q.Origin, "%s: not pinned to one version (==V)", q.Name)
			}
			if err := add(pinned{name: q.Name, version: v, hashes: q.Hashes, origin: q.Origin}); err != nil {
				return nil, err
			}
		}
	case FormatPylock:
		for _, p := range in.Pinned {
			if ok, err := applies(p.Marker, p.Origin); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			pp, err := pinOf(p)
			if err != nil {
				return nil, err
			}
			if err := add(pp); err != nil {
				return nil, err
			}
		}
	case FormatUvLock:
		ps, err := walkUvLock(in, env)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			pp, err := pinOf(p)
			if err != nil {
				return nil, err
			}
			if err := add(pp); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errdefs.Errorf(errdefs.BadArgument, "%s: input format %q", in.File, in.Format)
	}
	return out, nil
}

// pinOf is a lock's package to fetch.
func pinOf(p Pin) (pinned, error) {
	if p.SdistOnly() {
		return pinned{}, sdistOnly(p.Name, p.Version, p.Origin)
	}
	v, err := ParseVersion(p.Version)
	if err != nil {
		return pinned{}, lineError(p.Origin, err)
	}
	pp := pinned{name: CanonicalName(p.Name), version: v, byFile: map[string]string{}, origin: p.Origin}
	for _, w := range p.Wheels {
		pp.byFile[w.Name] = strings.ToLower(w.SHA256)
		pp.hashes = append(pp.hashes, "sha256:"+strings.ToLower(w.SHA256))
	}
	return pp, nil
}

// walkUvLock follows a uv.lock's edges from its roots (the project's own
// dependencies, not its optional ones: export a pylock.toml with the
// extras for those), markers evaluated for env; with no roots every
// package is taken.
func walkUvLock(in *Input, env Env) ([]Pin, error) {
	byName := map[string][]Pin{}
	for _, p := range in.Pinned {
		byName[p.Name] = append(byName[p.Name], p)
	}
	pick := func(name, version string) (Pin, bool) {
		ps := byName[name]
		for _, p := range ps {
			if version != "" && p.Version == version {
				return p, true
			}
		}
		if version != "" || len(ps) == 0 {
			return Pin{}, false
		}
		for _, p := range ps { // forks: the one whose resolution markers hold
			for _, m := range p.ResolutionMarkers {
				if pm, err := ParseMarker(m); err == nil {
					if ok, _ := pm.Evaluate(env, ""); ok {
						return p, true
					}
				}
			}
		}
		return ps[0], true
	}
	var roots []PinDependency
	for _, d := range in.Roots {
		if d.Extra == "" { // the project's optional dependencies are not asked for
			roots = append(roots, d)
		}
	}
	if len(in.Roots) == 0 {
		for _, p := range in.Pinned {
			roots = append(roots, PinDependency{Name: p.Name, Version: p.Version})
		}
	}
	var out []Pin
	done := map[string]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if !d.Marker.IsZero() {
			if ok, err := d.Marker.Evaluate(env, ""); err != nil {
				return nil, lineError(Origin{File: in.File}, err)
			} else if !ok {
				continue
			}
		}
		p, ok := pick(d.Name, d.Version)
		if !ok {
			return nil, errdefs.Errorf(errdefs.Invalid, "%s: a dependency on %s %s that the lock does not hold", in.File, d.Name, d.Version)
		}
		key := p.Name + "==" + p.Version
		if !done[key] {
			done[key] = true
			out = append(out, p)
		}
		for _, e := range p.Dependencies {
			if e.Extra != "" && !slices.Contains(d.Extras, e.Extra) {
				continue
			}
			k := key + "/" + e.Extra + "/" + e.Name + "/" + e.Version + "/" + strings.Join(e.Extras, ",") + "/" + e.Marker.String()
			if !done[k] {
				done[k] = true
				queue = append(queue, e)
			}
		}
	}
	return out, nil
}

func sdistOnly(name, version string, src Origin) error {
	return errdefs.New(errdefs.NotFound, &LineError{Origin: src, Err: fmt.Errorf("%s %s: %w and no wheel: prebake installs wheels only, no build runs; build a wheel (pip wheel --no-deps %s==%s -w DIR) into a find-links directory of the machine's pip configuration, or pin a version of %s that has wheels", name, version, ErrSdistOnly, name, version, name)})
}

// candidate is a file of a project from one source.
type candidate struct {
	IndexFile
	source string // index or find-links entry, without userinfo
	local  string // the file's path, for a find-links directory
}

// candidates lists a project's files from the find-links entries, then
// the indexes (a 404 on one index is no file there).
func (r *Resolver) candidates(ctx context.Context, name string) ([]candidate, error) {
	var out []candidate
	for _, fl := range r.cfg.FindLinks {
		dir := fl
		if u, err := url.Parse(fl); err == nil && u.Scheme == "file" {
			dir = u.Path
		} else if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			page, err := r.client.links(ctx, fl)
			if err != nil {
				return nil, err
			}
			for _, f := range page.Files {
				out = append(out, candidate{IndexFile: f, source: noUserinfo(fl)})
			}
			continue
		}
		if !isDir(dir) {
			continue // pip skips a missing find-links directory too
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, errdefs.Errorf(errdefs.Unavailable, "find-links %s: %v", dir, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".whl") && !isSdistName(e.Name()) {
				continue
			}
			out = append(out, candidate{IndexFile: IndexFile{Filename: e.Name(), URL: filepath.Join(dir, e.Name()), Hashes: map[string]string{}, Size: -1},
				source: dir, local: filepath.Join(dir, e.Name())})
		}
	}
	if r.cfg.NoIndex {
		return out, nil
	}
	found := len(out) > 0
	var notFound error
	for _, ix := range append([]string{r.cfg.IndexURL}, r.cfg.ExtraIndexURLs...) {
		page, err := r.client.Project(ctx, ix, name)
		if errors.Is(err, errdefs.NotFound) {
			notFound = err
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		for _, f := range page.Files {
			out = append(out, candidate{IndexFile: f, source: page.Index})
		}
	}
	if !found && notFound != nil {
		return nil, errdefs.Errorf(errdefs.NotFound, "no index of the machine's pip configuration (%s) has the project: %v", r.cfg, notFound)
	}
	return out, nil
}

// links reads a find-links page of links (PEP 503 HTML).
func (cl *Client) links(ctx context.Context, page string) (*ProjectPage, error) {
	shown := noUserinfo(page)
	u, err := url.Parse(page)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "find-links %s: %v", shown, redact.String(err.Error()))
	}
	resp, err := cl.get(ctx, shown, u, "text/html")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, cl.maxPage+1))
	if err != nil || int64(len(body)) > cl.maxPage {
		return nil, errdefs.Errorf(errdefs.Unavailable, "find-links %s: the page could not be read within %d bytes", shown, cl.maxPage)
	}
	return parsePage(shown, resp.Request.URL, "text/html", body)
}

// admitsPython reports whether a file's requires-python admits the
// target's full version; an empty or unreadable one admits it.
func admitsPython(requiresPython string, full Version) bool {
	if requiresPython == "" {
		return true
	}
	ss, err := ParseSpecifiers(requiresPython)
	return err != nil || ss.Contains(full, true)
}

func isSdistName(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".zip") || strings.HasSuffix(name, ".tar.bz2")
}

// choice is the file chosen for a pin.
type choice struct {
	pin  pinned
	file candidate
	name wheel.Name
}

// choose picks the best wheel of p's version for t.
func choose(p pinned, cands []candidate, t Target) (choice, error) {
	var names []wheel.Name
	var files []candidate
	var others []string
	sdist, yanked, pyTooNew := false, 0, 0
	full, _ := ParseVersion(t.fullVersion())
	for _, c := range cands {
		if !strings.HasSuffix(c.Filename, ".whl") {
			if isSdistName(c.Filename) && sdistVersionMatches(c.Filename, p) {
				sdist = true
			}
			continue
		}
		n, err := wheel.ParseFilename(c.Filename)
		if err != nil || n.Project() != p.name {
			continue
		}
		if v, err := ParseVersion(n.Version); err != nil || v.Compare(p.version) != 0 {
			continue
		}
		if len(p.byFile) > 0 {
			if _, ok := p.byFile[c.Filename]; !ok {
				continue
			}
		}
		if c.Yanked {
			yanked++
			continue
		}
		if !admitsPython(c.RequiresPython, full) {
			pyTooNew++
			continue
		}
		names = append(names, n)
		files = append(files, c)
		others = append(others, c.Filename)
	}
	// pip's hash-checking mode: the files whose index sha256 is pinned
	// are preferred (a better-tagged file of another digest, on another
	// index, would fail the check). A lock names its files: the best of
	// them is taken and checked against the lock's digest for it.
	if allowed := sha256s(p.hashes); len(allowed) > 0 && len(p.byFile) == 0 {
		var n2 []wheel.Name
		var f2 []candidate
		for i, f := range files {
			if allowed[f.Hashes["sha256"]] {
				n2, f2 = append(n2, names[i]), append(f2, f)
			}
		}
		if len(n2) > 0 {
			if i, ok := t.Best(n2); ok {
				return choice{pin: p, file: f2[i], name: n2[i]}, nil
			}
		}
	}
	if i, ok := t.Best(names); ok {
		return choice{pin: p, file: files[i], name: names[i]}, nil
	}
	if len(names) == 0 && yanked == 0 && pyTooNew == 0 {
		if len(p.byFile) > 0 {
			var locked []string
			for f := range p.byFile {
				locked = append(locked, f)
			}
			slices.Sort(locked)
			return choice{}, errdefs.New(errdefs.NotFound, &LineError{Origin: p.origin, Err: fmt.Errorf("%s %s: none of the lock's wheels (%s) is in the machine's indexes or find-links (%d files of the project there)", p.name, p.version, listOrNone(locked), len(cands))})
		}
		if sdist {
			return choice{}, sdistOnly(p.name, p.version.String(), p.origin)
		}
		return choice{}, errdefs.New(errdefs.NotFound, &LineError{Origin: p.origin, Err: fmt.Errorf("%s %s: no file of this version in the machine's indexes or find-links", p.name, p.version)})
	}
	tags, _ := t.Tags()
	want := "none"
	if len(tags) > 0 {
		want = tags[0].String()
	}
	return choice{}, errdefs.New(errdefs.NotFound, &LineError{Origin: p.origin, Err: fmt.Errorf("%s %s: %w (python %s, best tag %s): wheels %s; %d yanked, %d for other Python versions; pin a version with a wheel for the target, or put one in a find-links directory", p.name, p.version, ErrNoWheel, t.fullVersion(), want, listOrNone(others), yanked, pyTooNew)})
}

// sha256s are the sha256 digests among hashes ("sha256:<hex>").
func sha256s(hashes []string) map[string]bool {
	m := map[string]bool{}
	for _, h := range hashes {
		if algo, sum, ok := strings.Cut(strings.ToLower(h), ":"); ok && algo == "sha256" {
			m[sum] = true
		}
	}
	return m
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none that fit"
	}
	if len(s) > 8 {
		return strings.Join(s[:8], ", ") + fmt.Sprintf(" and %d more", len(s)-8)
	}
	return strings.Join(s, ", ")
}

// sdistVersionMatches reports whether an sdist's file name is of p's
// version ("name-1.0.tar.gz").
func sdistVersionMatches(file string, p pinned) bool {
	base := file
	for _, ext := range []string{".tar.gz", ".tar.bz2", ".zip"} {
		base = strings.TrimSuffix(base, ext)
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 || CanonicalName(base[:i]) != p.name {
		return false
	}
	v, err := ParseVersion(base[i+1:])
	return err == nil && v.Compare(p.version) == 0
}

// fetch brings the chosen file into the cache, checked.
func (r *Resolver) fetch(ctx context.Context, c choice) (Wheel, error) {
	f := c.file
	w := Wheel{Name: c.pin.name, Version: c.name.Version, File: f.Filename, URL: f.URL, RequiresPython: f.RequiresPython, Index: f.source}
	want := f.Hashes["sha256"]
	if s, ok := c.pin.byFile[f.Filename]; ok && s != "" {
		if want != "" && want != s {
			return Wheel{}, r.mismatch(c, "the lock's sha256 "+s, "the index's "+want)
		}
		want = s
	}
	var sum string
	var size int64
	switch {
	case f.local != "":
		st, err := os.Stat(f.local)
		if err != nil {
			return Wheel{}, errdefs.Errorf(errdefs.NotFound, "find-links %s: %v", f.local, err)
		}
		if st.Size() > r.client.maxWheel {
			return Wheel{}, errdefs.Errorf(errdefs.Invalid, "%s: %d bytes, over the limit of %d", f.local, st.Size(), r.client.maxWheel)
		}
		if err := wheel.CheckFile(ctx, f.local, wheel.WithMaxSize(r.client.maxWheel)); err != nil {
			return Wheel{}, r.refused(c, err)
		}
		sums, path, err := r.cache.PutFile(f.local)
		if err != nil {
			return Wheel{}, err
		}
		sum, size, w.Path = sums.SHA256, sums.Size, path
	default:
		// One download per URL across processes sharing the cache.
		unlock, err := r.cache.LockURL(ctx, f.URL)
		if err != nil {
			return Wheel{}, err
		}
		defer unlock()
		if e, ok := r.cache.Lookup(f.URL); ok && (want == "" || e.Sha256 == want) && (f.Size < 0 || e.Size == f.Size) {
			sum, size, w.Path = e.Sha256, e.Size, r.cache.BlobPath(e.Sha256)
			break
		}
		if sum, size, w.Path, err = r.download(ctx, c, want); err != nil {
			return Wheel{}, err
		}
	}
	if want != "" && sum != want {
		return Wheel{}, r.mismatch(c, "sha256 "+sum+" of the bytes", "the index's "+want)
	}
	if f.Size >= 0 && f.Size != size {
		return Wheel{}, r.sizeMismatch(c, size)
	}
	if err := checkAllowed(c, w.Path, sum); err != nil {
		return Wheel{}, err
	}
	w.Sha256, w.Size = sum, size
	return w, nil
}

// refused is a wheel that wheel.Check refused, named with its package,
// its origin and where it came from; a cancelled ctx stays itself.
func (r *Resolver) refused(c choice, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return lineError(c.pin.origin, fmt.Errorf("%s %s: %s (from %s): %w", c.pin.name, c.pin.version, c.file.Filename, c.file.URL, err))
}

// sizeMismatch is a file of another size than its index page says.
func (r *Resolver) sizeMismatch(c choice, size int64) error {
	return errdefs.New(errdefs.Invalid, &LineError{Origin: c.pin.origin, Err: fmt.Errorf("%s %s: %s: %d bytes, the index says %d", c.pin.name, c.pin.version, c.file.Filename, size, c.file.Size)})
}

func (r *Resolver) mismatch(c choice, got, want string) error {
	return errdefs.New(errdefs.Invalid, &LineError{Origin: c.pin.origin, Err: fmt.Errorf("%s %s: %s: %w: %s, %s", c.pin.name, c.pin.version, c.file.Filename, ErrHashMismatch, got, want)})
}

// download fetches the file into a temp file of the cache, bounded and
// hashed, and commits it when its sha256 is the one wanted.
func (r *Resolver) download(ctx context.Context, c choice, want string) (sum string, size int64, path string, err error) {
	u, err := url.Parse(c.file.URL)
	if err != nil {
		return "", 0, "", errdefs.Errorf(errdefs.Invalid, "%s: URL does not parse", c.file.Filename)
	}
	resp, err := r.client.get(ctx, c.file.source, u, "")
	if err != nil {
		return "", 0, "", err
	}
	defer resp.Body.Close()
	if resp.ContentLength > r.client.maxWheel {
		return "", 0, "", errdefs.Errorf(errdefs.Invalid, "%s: %d bytes, over the limit of %d", c.file.URL, resp.ContentLength, r.client.maxWheel)
	}
	tw, err := r.cache.NewTemp()
	if err != nil {
		return "", 0, "", err
	}
	defer tw.Abort()
	n, err := io.Copy(writeTagged{tw}, io.LimitReader(resp.Body, r.client.maxWheel+1))
	if err != nil {
		if ctx.Err() != nil {
			return "", 0, "", ctx.Err()
		}
		var we writeError
		if errors.As(err, &we) {
			return "", 0, "", errdefs.Errorf(errdefs.CantWrite, "%s: writing to the cache: %v", c.file.Filename, we.err)
		}
		return "", 0, "", errdefs.Errorf(errdefs.Unavailable, "GET %s: %s", c.file.URL, redact.String(err.Error()))
	}
	if n > r.client.maxWheel {
		return "", 0, "", errdefs.Errorf(errdefs.Invalid, "%s: over the limit of %d bytes", c.file.URL, r.client.maxWheel)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return "", 0, "", errdefs.Errorf(errdefs.Unavailable, "GET %s: %d bytes of %d", c.file.URL, n, resp.ContentLength)
	}
	s := tw.Sums()
	if want != "" && s.SHA256 != want {
		return "", 0, "", r.mismatch(c, "sha256 "+s.SHA256+" of the bytes", "the index's "+want)
	}
	if c.file.Size >= 0 && s.Size != c.file.Size {
		return "", 0, "", r.sizeMismatch(c, s.Size)
	}
	// The wheel is checked as Install will check it (paths, links,
	// RECORD, bounds) before the cache or a lock holds it.
	if err := wheel.Check(ctx, tw.ReaderAt(), s.Size, c.file.Filename, wheel.WithMaxSize(r.client.maxWheel)); err != nil {
		return "", 0, "", r.refused(c, err)
	}
	path, err = tw.Commit()
	if err != nil {
		return "", 0, "", err
	}
	if err := r.cache.Record(c.file.URL, cache.IndexEntry{Sha256: s.SHA256, Size: s.Size}); err != nil {
		return "", 0, "", err
	}
	return s.SHA256, s.Size, path, nil
}

// writeTagged tags its writer's errors as writeError, so a failed copy
// tells a full or broken cache from a broken download.
type writeTagged struct{ w io.Writer }

func (t writeTagged) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		err = writeError{err}
	}
	return n, err
}

type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// keepHashes puts the --hash values the user wrote (on a requirement or
// a constraint) onto the compiled requirement of the same name, in place
// of uv's: uv's hashes are the index's own, so a user's hash that the
// index's file does not match must still fail (checkAllowed). A hashed
// requirement with no compiled counterpart (its marker excludes the
// target) is nothing to check.
func keepHashes(orig, compiled *Input) {
	user := map[string][]string{}
	for _, list := range [][]Requirement{orig.Requirements, orig.Constraints} {
		for _, q := range list {
			if len(q.Hashes) > 0 {
				n := CanonicalName(q.Name)
				user[n] = append(user[n], q.Hashes...)
			}
		}
	}
	for i := range compiled.Requirements {
		if h, ok := user[CanonicalName(compiled.Requirements[i].Name)]; ok {
			compiled.Requirements[i].Hashes = slices.Clone(h)
		}
	}
}

// checkAllowed checks the file against the pin's allowed hashes (any one
// of them, as pip's hash-checking mode): sha256 from the sum, sha384 and
// sha512 by reading the blob.
func checkAllowed(c choice, path, sum string) error {
	if len(c.pin.hashes) == 0 {
		return nil
	}
	digests := map[string]string{"sha256": sum}
	for _, h := range c.pin.hashes {
		algo, hexsum, _ := strings.Cut(strings.ToLower(h), ":")
		got, ok := digests[algo]
		if !ok {
			var hf func() hash.Hash
			switch algo {
			case "sha384":
				hf = sha512.New384
			case "sha512":
				hf = sha512.New
			default:
				continue
			}
			f, err := os.Open(path)
			if err != nil {
				return errdefs.New(errdefs.CantWrite, err)
			}
			hh := hf()
			_, err = io.Copy(hh, f)
			f.Close()
			if err != nil {
				return errdefs.New(errdefs.CantWrite, err)
			}
			got = hex.EncodeToString(hh.Sum(nil))
			digests[algo] = got
		}
		if got == hexsum {
			return nil
		}
	}
	return errdefs.New(errdefs.Invalid, &LineError{Origin: c.pin.origin, Err: fmt.Errorf("%s %s: %s: %w: sha256:%s is none of the pinned hashes %s", c.pin.name, c.pin.version, c.file.Filename, ErrHashMismatch, sum, strings.Join(c.pin.hashes, ", "))})
}
