package s3store

import (
	"context"
	"errors"
	"strings"
	"time"
)

// GCResult says what GC removed (or, with a dry run, would remove).
type GCResult struct {
	KeptSets     int      `json:"keptSets"`
	DeletedSets  []string `json:"deletedSets"`
	DeletedJars  []string `json:"deletedJars"`
	FreedBytes   int64    `json:"freedBytes"`
	YoungSkipped int      `json:"youngJarsSkipped"`
	// AbortedUploads are the keys of the multipart uploads under the
	// store's jars/ that a killed bake left (older than the grace), aborted.
	AbortedUploads []string `json:"abortedUploads"`
}

// upload is a multipart upload in progress.
type upload struct {
	Key, ID   string
	Initiated time.Time
}

// GCOption configures one GC.
type GCOption func(*gcOptions) error

type gcOptions struct {
	grace  time.Duration
	dryRun bool
}

// WithGrace makes GC leave alone the unreferenced jars younger than d, since
// a bake in progress uploads its jars before its manifest. The default is 0.
func WithGrace(d time.Duration) GCOption { return func(o *gcOptions) error { o.grace = d; return nil } }

// WithDryRun makes GC delete nothing: its result says what it would
// delete. The default is false.
func WithDryRun(b bool) GCOption { return func(o *gcOptions) error { o.dryRun = b; return nil } }

// GC deletes the sets for which keep returns false, then every jar (and
// site-packages archive, listed in DeletedJars) that no
// remaining set references. keep gets the set's last use: the later of its
// write time and its last recorded hit (used/<lock-hash>/<day>); the use
// markers of deleted sets go with them, and a kept set keeps only its
// latest. Jars younger than WithGrace are left alone, since a bake in
// progress uploads its jars before its manifest. The multipart uploads
// under jars/ begun before the grace (a killed bake's) are aborted.
// WithDryRun deletes nothing.
func (s *Store) GC(ctx context.Context, keep func(lockHash string, written time.Time) bool, opts ...GCOption) (*GCResult, error) {
	var o gcOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	grace, dryRun := o.grace, o.dryRun
	res := &GCResult{DeletedSets: []string{}, DeletedJars: []string{}, AbortedUploads: []string{}}
	sets, err := s.b.list(ctx, s.key("sets/"))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	lastUse, markers, err := s.lastUses(ctx)
	if err != nil {
		return nil, err
	}
	referenced := map[string]bool{}
	for _, o := range sets {
		hash := strings.TrimSuffix(strings.TrimPrefix(o.Key, s.key("sets/")), ".json")
		used := o.ModTime
		if t := lastUse[hash]; t.After(used) {
			used = t
		}
		stale := markers[hash]
		if keep(hash, used) {
			if len(stale) > 0 {
				stale = stale[:len(stale)-1] // the latest day stays
			}
			if !dryRun {
				for _, k := range stale {
					_ = s.b.remove(ctx, k)
				}
			}
			m, err := s.Manifest(ctx, hash)
			if err != nil {
				return nil, err
			}
			for _, j := range m.Jars {
				referenced[s.key(j.Path)] = true
			}
			if m.Python != nil {
				referenced[s.key(m.Python.Archive.Path)] = true
			}
			res.KeptSets++
			continue
		}
		res.DeletedSets = append(res.DeletedSets, hash)
		if !dryRun {
			if err := s.b.remove(ctx, o.Key); err != nil {
				return nil, err
			}
			for _, k := range stale {
				_ = s.b.remove(ctx, k)
			}
		}
	}
	jars, err := s.b.list(ctx, s.key("jars/"))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	archives, err := s.b.list(ctx, s.key("archives/"))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	jars = append(jars, archives...) // the sets' site-packages archives
	now := time.Now()
	for _, o := range jars {
		if referenced[o.Key] {
			continue
		}
		if now.Sub(o.ModTime) < grace {
			res.YoungSkipped++
			continue
		}
		res.DeletedJars = append(res.DeletedJars, strings.TrimPrefix(o.Key, s.prefix))
		res.FreedBytes += o.Size
		if !dryRun {
			if err := s.b.remove(ctx, o.Key); err != nil {
				return nil, err
			}
		}
	}
	// Multipart uploads a killed bake left: they are no object (list
	// does not see them), yet their parts are stored and billed until
	// aborted. One younger than the grace may be a bake in progress.
	ups, err := s.b.uploads(ctx, s.key("jars/"))
	if err != nil {
		return nil, err
	}
	for _, u := range ups {
		if now.Sub(u.Initiated) < grace {
			continue
		}
		res.AbortedUploads = append(res.AbortedUploads, strings.TrimPrefix(u.Key, s.prefix))
		if !dryRun {
			if err := s.b.abort(ctx, u); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}
