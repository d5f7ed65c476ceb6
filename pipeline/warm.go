package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
)

// SetsFile is the input of `prebake warm` (see examples/sets.yaml).
type SetsFile struct {
	// Store is the default store URL; the caller may override it.
	Store string `yaml:"store"`
	// Sets are the package sets to resolve and upload.
	Sets []SetSpec `yaml:"sets"`
}

// SetSpec is one package set: coordinates as for spark-submit, or a lock.
type SetSpec struct {
	Name         string        `yaml:"name"`
	Packages     []string      `yaml:"packages"`
	Repositories []string      `yaml:"repositories"`
	Excludes     []string      `yaml:"excludes"`
	Conflict     lock.Conflict `yaml:"conflict"`
	// Lock is a lockfile path (relative to the sets file); with no
	// packages, the set is exactly the lock (its wheels too, when it has
	// any).
	Lock string `yaml:"lock"`
	// Python is the set's Python half: its wheels go into the set's
	// site-packages archive (optional).
	Python *SetPython `yaml:"python"`
}

// SetPython is a set's Python half: an input file and the target its
// wheels are chosen for (PythonRequest's).
type SetPython struct {
	// Requirements is a requirements file, pyproject.toml, pylock.toml or
	// uv.lock, relative to the sets file.
	Requirements string `yaml:"requirements"`
	// Version ("3.11") and Platform (manylinux_2_36_x86_64) are the
	// target: both, or neither for the target the set's lock records.
	Version  string `yaml:"version"`
	Platform string `yaml:"platform"`
}

// ParseSets parses a sets file; name is used in errors.
func ParseSets(name string, data []byte) (*SetsFile, error) {
	var f SetsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: %w", name, err)
	}
	seen := map[string]bool{}
	for i, s := range f.Sets {
		if s.Name == "" {
			return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %d has no name", name, i+1)
		}
		if seen[s.Name] {
			return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q appears twice", name, s.Name)
		}
		seen[s.Name] = true
		if len(s.Packages) == 0 && s.Lock == "" {
			return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q needs packages or a lock", name, s.Name)
		}
		switch s.Conflict {
		case "", lock.ConflictLatest, lock.ConflictNearest:
		default:
			return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q: conflict %q must be latest or nearest", name, s.Name, s.Conflict)
		}
		if p := s.Python; p != nil {
			switch {
			case p.Requirements == "":
				return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q: python needs requirements (a requirements file, pyproject.toml, pylock.toml or uv.lock, relative to the sets file)", name, s.Name)
			case (p.Version == "") != (p.Platform == ""):
				return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q: python version and platform go together (the target, e.g. 3.11 and manylinux_2_36_x86_64)", name, s.Name)
			case p.Version == "" && s.Lock == "":
				return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q: python needs its target, version and platform (e.g. 3.11 and manylinux_2_36_x86_64), or a lock that records one", name, s.Name)
			}
			if p.Version != "" {
				if _, err := ParsePythonTarget(p.Version, p.Platform); err != nil {
					return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: set %q: python: %w", name, s.Name, err)
				}
			}
		}
	}
	if len(f.Sets) == 0 {
		return nil, errdefs.Errorf(errdefs.Invalid, "sets file %s: no sets", name)
	}
	return &f, nil
}

// ParseShard parses "i/n" (0 <= i < n).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, errdefs.Optionf(errdefs.BadArgument, "pipeline.ParseShard", "shard %q: want i/n with 0 <= i < n", s)
	}
	return i, n, nil
}

// Shard returns the sets of shard i of n: those whose index in the file is
// i modulo n. Every set is in exactly one shard.
func Shard(sets []SetSpec, i, n int) []SetSpec {
	var out []SetSpec
	for k, s := range sets {
		if k%n == i {
			out = append(out, s)
		}
	}
	return out
}

// WarmOptions configure Warm.
type WarmOptions struct {
	// Request holds the defaults of every set: a set's repositories and
	// excludes add to them, its conflict mode and lock replace them, its
	// packages are the set's (LockOrResolve).
	Request resolver.Request
	// Dir is where a set's relative lock path is read from (the sets
	// file's directory).
	Dir string
	// Concurrency is how many sets are resolved and baked at a time
	// (default 1); blob transfers share the store's
	// s3store.WithConcurrency limit, and a blob shared by sets is sent once.
	Concurrency int
	// Reporter gets the steps and progress (nil: none).
	Reporter *progress.Reporter
	// Bake are the options of each set's bake (s3store.WithVerify).
	Bake []s3store.BakeOption
	// Python holds the defaults of a set's Python half: UserAgent,
	// MaxRetryWait, Log and Getenv (the input and the target are the
	// set's).
	Python PythonRequest
}

// SetRequest is the resolution request of one set of a sets file: def's
// repositories and excludes, then the set's; the set's conflict mode, lock
// (relative to dir) and packages.
func SetRequest(def resolver.Request, set SetSpec, dir string) resolver.Request {
	req := def // a copy per set
	req.Repositories = append(append([]string{}, def.Repositories...), set.Repositories...)
	req.Excludes = append(append([]string{}, def.Excludes...), set.Excludes...)
	if set.Conflict != "" {
		req.Conflict = set.Conflict
	}
	if set.Lock != "" {
		req.LockPath = set.Lock
		if !filepath.IsAbs(req.LockPath) {
			req.LockPath = filepath.Join(dir, req.LockPath)
		}
	}
	req.Packages = set.Packages
	return req
}

// WarmResult is the outcome of one set.
type WarmResult struct {
	Name      string `json:"name"`
	LockHash  string `json:"lockHash,omitempty"`
	Hit       bool   `json:"hit"`
	Uploaded  int    `json:"uploaded"`
	Skipped   int    `json:"skipped"`
	BytesSent int64  `json:"bytesSent"`
	// Wheels counts the set's wheels (in its site-packages archive).
	Wheels int    `json:"wheels,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Warm resolves each set (SetRequest, LockOrResolve; with a Python half,
// ResolveWithPython) and bakes it into the store, wheels included,
// o.Concurrency sets at a time. It goes on past a failed set, and returns
// every result in input order with the failures joined; the error's kind
// is the first failure's.
func Warm(ctx context.Context, st *s3store.Store, sets []SetSpec, o WarmOptions) ([]WarmResult, error) {
	return warm(ctx, st, sets, o.Concurrency, o.Bake, func(ctx context.Context, set SetSpec) (setFiles, error) {
		return resolveSet(ctx, set, o)
	})
}

// setFiles are a set's lock and the sources of its jars' and wheels'
// local files (wheels nil: none).
type setFiles struct {
	lock         *lock.File
	jars, wheels lock.Jars
}

// resolveSet resolves one set of a sets file, both halves.
func resolveSet(ctx context.Context, set SetSpec, o WarmOptions) (setFiles, error) {
	req := SetRequest(o.Request, set, o.Dir)
	py := o.Python
	var ropts []resolver.Option
	if o.Reporter != nil {
		ropts = append(ropts, resolver.WithLogger(o.Reporter), resolver.WithProgress(o.Reporter))
		if py.Log == nil {
			py.Log = o.Reporter
		}
	}
	old, err := readLock(req.LockPath) // a missing one: LockOrResolve says so, or ResolveWithPython writes it
	if err != nil {
		return setFiles{}, err
	}
	if set.Python == nil {
		if len(req.Packages) == 0 && old != nil && len(old.Wheels()) > 0 {
			return setFiles{lock: old, jars: LockedJars(JarHalf(old), req, ropts...), wheels: LockedWheels(old, req, &py)}, nil
		}
		lf, jars, err := LockOrResolve(ctx, req, o.Reporter)
		return setFiles{lock: lf, jars: jars}, err
	}
	py.Requirements, py.Version, py.Platform = set.Python.Requirements, set.Python.Version, set.Python.Platform
	if !filepath.IsAbs(py.Requirements) {
		py.Requirements = filepath.Join(o.Dir, py.Requirements)
	}
	if py.Version == "" {
		if old == nil || old.Inputs.Python == nil || len(old.Inputs.Python.Platforms) == 0 {
			return setFiles{}, errdefs.Errorf(errdefs.Invalid, "python: no target: the set gives no version and platform, and its lock %s records none", req.LockPath)
		}
		py.Version, py.Platform = old.Inputs.Python.Version, old.Inputs.Python.Platforms[0]
	}
	if len(req.Packages) == 0 && old != nil {
		// The lock's own packages, as a bake of a lock with a Python input.
		req.Packages = old.Inputs.Packages
		if len(set.Excludes) == 0 {
			req.Excludes = append(req.Excludes, old.Inputs.Excludes...)
		}
		if set.Conflict == "" && old.Inputs.Conflict != "" {
			req.Conflict = old.Inputs.Conflict
		}
	}
	res, err := ResolveWithPython(ctx, req, &py, ropts...)
	if err != nil {
		return setFiles{}, err
	}
	f := setFiles{lock: res.Lock, jars: lock.LocalJars(res.Jars.Paths)}
	if len(res.Wheels) > 0 {
		f.wheels = lock.LocalJars(res.WheelPaths)
	}
	return f, nil
}

// resolveFunc resolves one set to its lock and the sources of its files.
type resolveFunc func(ctx context.Context, set SetSpec) (setFiles, error)

// warm is Warm with the resolution given (the tests' fakes).
func warm(ctx context.Context, st *s3store.Store, sets []SetSpec, concurrency int, bake []s3store.BakeOption, resolve resolveFunc) ([]WarmResult, error) {
	concurrency = max(concurrency, 1)
	results := make([]WarmResult, len(sets))
	errs := make([]error, len(sets))
	var mu sync.Mutex
	g := new(errgroup.Group)
	g.SetLimit(concurrency)
	for i, set := range sets {
		g.Go(func() error {
			r := WarmResult{Name: set.Name}
			err := func() error {
				f, err := resolve(ctx, set)
				if err != nil {
					return err
				}
				r.LockHash = f.lock.Hash()
				opts := bake
				if f.wheels != nil {
					opts = append(slices.Clone(bake), s3store.WithWheels(f.wheels))
				}
				res, err := st.Bake(ctx, f.lock, f.jars, opts...)
				if err != nil {
					return err
				}
				r.Hit, r.Uploaded, r.Skipped, r.BytesSent = res.Hit, res.Uploaded, res.Skipped, res.BytesSent
				r.Wheels = len(f.lock.Wheels())
				return nil
			}()
			if err != nil {
				err = fmt.Errorf("set %s: %w", set.Name, err)
				r.Error = err.Error()
			}
			mu.Lock()
			results[i], errs[i] = r, err
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	var first error
	for _, e := range errs {
		if e != nil && first == nil {
			first = e
		}
	}
	if first == nil {
		return results, nil
	}
	return results, errdefs.New(errdefs.KindOf(first), errors.Join(errs...))
}
