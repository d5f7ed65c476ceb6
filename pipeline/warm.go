package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
	// packages, the set is exactly the lock.
	Lock string `yaml:"lock"`
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
	Error     string `json:"error,omitempty"`
}

// Warm resolves each set (SetRequest, LockOrResolve) and bakes it into the
// store, o.Concurrency sets at a time. It goes on past a failed set, and
// returns every result in input order with the failures joined; the
// error's kind is the first failure's.
func Warm(ctx context.Context, st *s3store.Store, sets []SetSpec, o WarmOptions) ([]WarmResult, error) {
	return warm(ctx, st, sets, o.Concurrency, o.Bake, func(ctx context.Context, set SetSpec) (*lock.File, lock.Jars, error) {
		return LockOrResolve(ctx, SetRequest(o.Request, set, o.Dir), o.Reporter)
	})
}

// resolveFunc resolves one set to its lock and a source of local jar paths.
type resolveFunc func(ctx context.Context, set SetSpec) (*lock.File, lock.Jars, error)

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
				lf, jars, err := resolve(ctx, set)
				if err != nil {
					return err
				}
				r.LockHash = lf.Hash()
				res, err := st.Bake(ctx, lf, jars, bake...)
				if err != nil {
					return err
				}
				r.Hit, r.Uploaded, r.Skipped, r.BytesSent = res.Hit, res.Uploaded, res.Skipped, res.BytesSent
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
