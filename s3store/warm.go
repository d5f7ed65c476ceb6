package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
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
		return 0, 0, errdefs.Optionf(errdefs.BadArgument, "s3store.ParseShard", "shard %q: want i/n with 0 <= i < n", s)
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

// ResolveFunc resolves one set to its lock and a source of local jar paths.
type ResolveFunc func(ctx context.Context, set SetSpec) (*lock.File, lock.Jars, error)

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

// Warm resolves and bakes each set, WithWarmConcurrency sets at a time
// (blob transfers share the store's WithConcurrency limit, and a blob
// shared by sets is sent once). It goes on past a failed set, and returns every
// result in input order with the failures joined; the error's exit code is
// the first failure's.
func (s *Store) Warm(ctx context.Context, sets []SetSpec, resolve ResolveFunc) ([]WarmResult, error) {
	concurrency := max(s.o.warmSets, 1)
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
				res, err := s.Bake(ctx, lf, jars)
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
