package s3store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/internal/progress/task"
	"github.com/prebake/prebake/lock"
)

// ManifestVersion is the schema version of sets/<lock-hash>.json.
const ManifestVersion = 1

// Manifest is sets/<lock-hash>.json: the jars of one set in lock order
// (spark.jars order) and, for a lock with wheels, its Python half
// (python.go). Field order is alphabetical, so keys are sorted.
type Manifest struct {
	Jars     []ManifestJar `json:"jars"`
	LockHash string        `json:"lockHash"`
	// Python is absent (nil) for a set without wheels: such a manifest
	// keeps the bytes it had before wheels existed. A reader that predates
	// it ignores the key, and then refuses the set (its lockHash covers
	// the wheels, not only the jars it reads).
	Python  *ManifestPython `json:"python,omitempty"`
	Version int             `json:"version"`
}

// ManifestJar is one jar of a set.
type ManifestJar struct {
	Coord  string `json:"coord"`
	File   string `json:"file"`
	Path   string `json:"path"` // relative to the store prefix: jars/sha256/<hex>/<file>
	Sha256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// NewManifest builds the manifest of lock's jars; a lock with wheels gets
// its Python half (the archive, known once built) from Bake.
func NewManifest(lf *lock.File) *Manifest {
	jars := lf.Jars()
	m := &Manifest{Jars: make([]ManifestJar, 0, len(jars)), LockHash: lf.Hash(), Version: ManifestVersion}
	for _, a := range jars {
		m.Jars = append(m.Jars, ManifestJar{Coord: a.Coord, File: a.File, Path: JarPath(a.Sha256, a.File), Sha256: a.Sha256, Size: a.Size})
	}
	return m
}

// Marshal returns the manifest's stable JSON form.
func (m *Manifest) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseManifest parses and checks a manifest; name is used in errors.
func ParseManifest(name string, data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: %w", name, err)
	}
	if m.Version != ManifestVersion {
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: unsupported version %d (want %d)", name, m.Version, ManifestVersion)
	}
	lf := &lock.File{}
	for _, j := range m.Jars {
		if err := lock.CheckArtifact(lock.Artifact{Coord: j.Coord, File: j.File, Sha256: j.Sha256, Size: j.Size}); err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: %w", name, err)
		}
		if j.Path != JarPath(j.Sha256, j.File) {
			return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: jar %q has a bad sha256 or path", name, j.File)
		}
		lf.Artifacts = append(lf.Artifacts, lock.Artifact{Coord: j.Coord, File: j.File, Sha256: j.Sha256})
	}
	if m.Python != nil {
		ws, err := checkPython(name, m.Python)
		if err != nil {
			return nil, err
		}
		lf.Artifacts = append(lf.Artifacts, ws...)
	}
	if h := lf.Hash(); h != m.LockHash {
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: lockHash %s does not match its jars (%s)", name, m.LockHash, h)
	}
	return &m, nil
}

// BakeResult says what Bake did.
type BakeResult struct {
	Manifest *Manifest
	// Hit is true when the set's manifest was already in the store.
	Hit bool
	// Uploaded and Skipped count jars sent and jars found in place.
	Uploaded, Skipped int
	// Repaired counts jars (and the archive) that a verified hit found
	// missing and re-sent.
	Repaired int
	// ArchiveSent is true when the set's site-packages archive was sent
	// (a lock with wheels).
	ArchiveSent bool
	// BytesSent is the jar and manifest bytes sent.
	BytesSent int64
}

// BakeOption configures one Bake.
type BakeOption func(*bakeOptions) error

type bakeOptions struct {
	verify bool
	wheels lock.Jars // WithWheels
}

// WithVerify makes a hit of the Bake also HEAD every jar of the set and
// re-upload the missing ones. The default is false: a hit costs one GET.
func WithVerify(v bool) BakeOption { return func(o *bakeOptions) error { o.verify = v; return nil } }

// Bake makes lock's set available in the store: every jar, then the
// manifest. When the manifest already exists it is a hit and nothing is sent
// (WithVerify: missing jars are re-sent). jars gives the local paths of
// lf's artifacts, index for index (lock.LocalJars for paths at hand); Bake
// calls it only when some jar must be uploaded, so a hit needs no local jars.
func (s *Store) Bake(ctx context.Context, lf *lock.File, jars lock.Jars, opts ...BakeOption) (*BakeResult, error) {
	var bo bakeOptions
	for _, opt := range opts {
		if err := opt(&bo); err != nil {
			return nil, err
		}
	}
	// Jars go into the manifest, wheels into one archive (WithWheels);
	// any other kind is refused, never stored as if it were a jar.
	if err := lf.Placeable("bake s3", bo.wheels != nil); err != nil {
		return nil, err
	}
	want := NewManifest(lf)
	res := &BakeResult{Manifest: want}
	have, err := s.Manifest(ctx, want.LockHash)
	switch {
	case err == nil:
		res.Hit = true
		res.Manifest = have
		s.o.logger.Printf("set %s: in the store (%d jars)", want.LockHash[:12], len(have.Jars))
		s.recordUse(ctx, want.LockHash)
		if !bo.verify {
			return res, nil
		}
	case errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoBucket):
	default:
		return nil, err
	}
	var paths []string
	needPaths := func() error {
		if paths != nil {
			return nil
		}
		var p []string
		if jars != nil { // a lock with wheels only may give none
			var err error
			if p, err = jars(ctx); err != nil {
				return err
			}
		}
		if len(p) != len(lf.Jars()) {
			return errdefs.Errorf(errdefs.Internal, "set %s: %d local paths for %d jars", want.LockHash, len(p), len(lf.Jars()))
		}
		paths = p
		return nil
	}
	if !res.Hit {
		if err := needPaths(); err != nil {
			return nil, err
		}
	}
	var sentArchive int64
	// The wheels' archive first: a refused wheel stops the bake before
	// any byte is sent.
	if !res.Hit && len(lf.Wheels()) > 0 {
		py, n, err := s.putArchive(ctx, lf, bo.wheels, "")
		if err != nil {
			return nil, err
		}
		want.Python = py
		sentArchive = n
		res.ArchiveSent = n > 0
	}
	// HEAD every jar; collect the missing ones.
	todo, err := s.missing(ctx, want)
	if err != nil {
		return nil, err
	}
	res.Skipped = len(want.Jars) - len(todo)
	if len(todo) > 0 {
		if err := needPaths(); err != nil {
			return nil, err
		}
	}
	var sent atomic.Int64
	var uploaded atomic.Int32
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.o.concurrency)
	for _, i := range todo {
		j := want.Jars[i]
		g.Go(func() error {
			n, err := s.putJar(gctx, j, paths[i])
			if n > 0 {
				uploaded.Add(1)
			}
			sent.Add(n)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res.Uploaded, res.BytesSent = int(uploaded.Load()), sent.Load()+sentArchive
	if res.Hit && res.Manifest.Python != nil {
		ok, err := s.hasArchive(ctx, res.Manifest)
		if err != nil {
			return nil, err
		}
		if !ok {
			_, n, err := s.putArchive(ctx, lf, bo.wheels, res.Manifest.Python.Archive.Sha256)
			if err != nil {
				return nil, err
			}
			res.BytesSent += n
			res.ArchiveSent = n > 0
			res.Repaired++
		}
	}
	if res.Hit {
		res.Repaired += len(todo)
		if len(todo) > 0 {
			s.o.logger.Printf("set %s: repaired %d missing jars", want.LockHash[:12], len(todo))
		}
		return res, nil
	}
	// Every jar is in place: now, and only now, the manifest.
	data, err := want.Marshal()
	if err != nil {
		return nil, errdefs.New(errdefs.Internal, err)
	}
	switch err := s.b.putBytes(ctx, s.key(SetPath(want.LockHash)), data); {
	case err == nil:
		res.BytesSent += int64(len(data))
	case errors.Is(err, ErrExists):
	default:
		return nil, err
	}
	s.o.logger.Printf("set %s: %d jars sent, %d already there", want.LockHash[:12], res.Uploaded, res.Skipped)
	return res, nil
}

// Manifest reads sets/<lockHash>.json. A missing set matches ErrNotFound.
func (s *Store) Manifest(ctx context.Context, lockHash string) (*Manifest, error) {
	key := s.key(SetPath(lockHash))
	data, err := s.b.get(ctx, key)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(s.b.name(key), data)
	if err != nil {
		return nil, err
	}
	if m.LockHash != lockHash {
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: names set %s", s.b.name(key), m.LockHash)
	}
	return m, nil
}

// Missing HEADs every jar of m and returns those not in the store.
func (s *Store) Missing(ctx context.Context, m *Manifest) ([]ManifestJar, error) {
	idx, err := s.missing(ctx, m)
	if err != nil {
		return nil, err
	}
	out := make([]ManifestJar, 0, len(idx))
	for _, i := range idx {
		out = append(out, m.Jars[i])
	}
	return out, nil
}

// missing HEADs every jar of m and returns the indexes of those missing.
func (s *Store) missing(ctx context.Context, m *Manifest) ([]int, error) {
	missing := make([]bool, len(m.Jars))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.o.concurrency)
	for i, j := range m.Jars {
		g.Go(func() error {
			ok, err := s.has(gctx, j)
			missing[i] = !ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var idx []int
	for i, m := range missing {
		if m {
			idx = append(idx, i)
		}
	}
	return idx, nil
}

// has reports whether the jar is in the store with the right size.
func (s *Store) has(ctx context.Context, j ManifestJar) (bool, error) {
	key, err := s.jarKey(j)
	if err != nil {
		return false, err
	}
	size, err := s.b.head(ctx, key)
	switch {
	case err == nil && size == j.Size:
		return true, nil
	case err == nil:
		return false, errdefs.Errorf(errdefs.Invalid, "%s: %d bytes in the store, %d in the lock: the store is corrupt; delete the object", s.b.name(key), size, j.Size)
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// putJar uploads one jar; a concurrent call for the same key waits for the
// first and sends nothing. It returns the bytes sent.
func (s *Store) putJar(ctx context.Context, j ManifestJar, file string) (int64, error) {
	key, err := s.jarKey(j)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if c, ok := s.inflight[key]; ok {
		s.mu.Unlock()
		select {
		case <-c.done:
			return 0, c.err
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	c := &call{done: make(chan struct{})}
	s.inflight[key] = c
	s.mu.Unlock()
	n, err := s.upload(ctx, key, j, file)
	c.err = err
	close(c.done)
	s.mu.Lock()
	delete(s.inflight, key) // a failure can be retried by a later call
	s.mu.Unlock()
	return n, err
}

type call struct {
	done chan struct{}
	err  error
}

func (s *Store) upload(ctx context.Context, key string, j ManifestJar, file string) (int64, error) {
	if err := checkFile(file, j); err != nil {
		return 0, err
	}
	if err := s.acquire(ctx); err != nil {
		return 0, err
	}
	defer s.release()
	f, err := os.Open(file)
	if err != nil {
		return 0, errdefs.New(errdefs.CantWrite, fmt.Errorf("reading %s for %s: %w", file, s.b.name(key), err))
	}
	defer f.Close()
	s.o.debugf("uploading %s (%d bytes)", j.File, j.Size)
	task := s.o.startTask(j.File, j.Size)
	err = s.b.putFile(ctx, key, file, &countingReader{r: f, task: task}, j.Size, j.Sha256)
	switch {
	case err == nil:
		task.Done(nil)
		return j.Size, nil
	case errors.Is(err, ErrExists):
		// A racing writer got there first: same key, same bytes.
		task.Done(nil)
		return 0, nil
	default:
		task.Done(err)
		return 0, err
	}
}

// countingReader reports the bytes read through it to a progress task.
type countingReader struct {
	r    io.Reader
	task task.Task
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.task.Add(int64(n))
	}
	return n, err
}

// checkFile makes sure the local file is the jar the lock names, so a
// corrupt cache never fills an immutable key.
func checkFile(file string, j ManifestJar) error {
	f, err := os.Open(file)
	if err != nil {
		return errdefs.New(errdefs.NotFound, fmt.Errorf("jar %s: %w", j.File, err))
	}
	defer f.Close()
	got, n, err := digest.Reader(f)
	if err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("reading %s: %w", file, err))
	}
	if got != j.Sha256 || n != j.Size {
		return errdefs.Errorf(errdefs.Invalid, "jar %s at %s: sha256 %s and %d bytes, the lock says %s and %d bytes", j.File, file, got, n, j.Sha256, j.Size)
	}
	return nil
}
