package s3store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/lock"
)

// The Python half of a set (a lock with wheels) is one archive: the
// wheels installed by prebake (internal/wheel: no script runs) and merged
// into one site-packages tree (internal/sitepkgs), as a tar.gz whose
// bytes depend only on the wheels (sorted entries, mtimes ArchiveEpoch,
// a fixed gzip header and level). It is not a virtual environment: no
// interpreter, no link, no absolute path, so it unpacks anywhere.
const (
	// ArchiveFile is the archive's file name in the store.
	ArchiveFile = "site-packages.tar.gz"
	// ArchiveName is the directory Spark unpacks it into: the fragment
	// of its spark.archives URL, relative to the working directory of the
	// driver (cluster mode) and of each executor.
	ArchiveName = "pydeps"
)

// ArchiveEpoch is every mtime in an archive: fixed, not SOURCE_DATE_EPOCH,
// so every machine that bakes a set makes the same bytes (the same key).
var ArchiveEpoch = wheel.DefaultEpoch

// ArchivePath returns the path of an archive relative to the store prefix:
// archives/sha256/<hex>/site-packages.tar.gz, named by its own sha256.
func ArchivePath(sha256Hex string) string {
	return "archives/sha256/" + strings.ToLower(sha256Hex) + "/" + ArchiveFile
}

// ManifestPython is the Python half of a set's manifest. A manifest
// without one (a jar-only set) has no "python" key at all, so its bytes
// are those of a prebake without wheels.
type ManifestPython struct {
	Archive ManifestArchive `json:"archive"`
	Wheels  []ManifestWheel `json:"wheels"` // lock order (by file name)
}

// ManifestArchive is the set's site-packages archive.
type ManifestArchive struct {
	Path   string `json:"path"` // relative to the store prefix: archives/sha256/<hex>/site-packages.tar.gz
	Sha256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ManifestWheel is one wheel of the set, as the lock has it (the lock
// hash covers these fields).
type ManifestWheel struct {
	File    string `json:"file"`
	Name    string `json:"name"`
	Sha256  string `json:"sha256"`
	Size    int64  `json:"size"`
	Version string `json:"version"`
}

// WithWheels gives the local files of the lock's wheels (lf.Wheels(),
// index for index: the resolver's cache blobs) to a Bake of a lock with
// wheels; each is checked against the lock's sha256 and size before it
// is installed. It is called only when the archive must be built. A lock
// with wheels baked without it is refused (lock.ErrUnsupportedKind).
func WithWheels(wheels lock.Jars) BakeOption {
	return func(o *bakeOptions) error { o.wheels = wheels; return nil }
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// manifestWheels lists lf's wheels for its manifest.
func manifestWheels(lf *lock.File) []ManifestWheel {
	wheels := lf.Wheels()
	out := make([]ManifestWheel, 0, len(wheels))
	for _, a := range wheels {
		out = append(out, ManifestWheel{File: a.File, Name: a.Name, Sha256: a.Sha256, Size: a.Size, Version: a.Version})
	}
	return out
}

// checkPython checks a manifest's Python half and returns its wheels as
// lock artifacts (for the lock hash).
func checkPython(name string, p *ManifestPython) ([]lock.Artifact, error) {
	bad := func(format string, args ...any) error {
		return errdefs.Errorf(errdefs.Invalid, "manifest %s: python: %s", name, fmt.Sprintf(format, args...))
	}
	a := p.Archive
	if !hex64.MatchString(a.Sha256) || a.Path != ArchivePath(a.Sha256) || a.Size <= 0 {
		return nil, bad("archive %s has a bad sha256, size or path", coordpart.Quote(a.Path))
	}
	if len(p.Wheels) == 0 {
		return nil, bad("an archive without wheels")
	}
	var arts []lock.Artifact
	for _, w := range p.Wheels {
		wf, err := wheel.ParseFilename(w.File)
		if err != nil {
			return nil, bad("wheel: %v", err)
		}
		if w.Name != lock.NormalizeProject(wf.Distribution) || w.Version != strings.ToLower(wf.Version) || !hex64.MatchString(w.Sha256) || w.Size <= 0 {
			return nil, bad("wheel %s has a bad name, version, sha256 or size", coordpart.Quote(w.File))
		}
		arts = append(arts, lock.Artifact{Kind: lock.KindWheel, File: w.File, Name: w.Name, Version: w.Version, Sha256: w.Sha256, Size: w.Size})
	}
	return arts, nil
}

// archiveKey is the key of a set's archive: defence in depth behind
// ParseManifest, archives/sha256/<hex>/site-packages.tar.gz under the
// prefix.
func (s *Store) archiveKey(a ManifestArchive) (string, error) {
	if !hex64.MatchString(a.Sha256) || a.Path != ArchivePath(a.Sha256) {
		return "", errdefs.Errorf(errdefs.Invalid, "store %s: archive: the key %s is not archives/sha256/<hex>/%s", s.url, coordpart.Quote(a.Path), ArchiveFile)
	}
	key, err := safepath.JoinSlash(s.prefix, a.Path)
	if err != nil {
		return "", errdefs.Errorf(errdefs.Invalid, "store %s: %w", s.url, err)
	}
	return key, nil
}

// BuildArchive installs the wheels of lf (their local files at paths,
// index for index of lf.Wheels()) into one site-packages tree and writes
// it as a tar.gz to w. It returns the archive's sha256 (hex) and size.
// tmp is an existing directory for the wheels that must be staged (the
// caller removes it): the others' files are read from the wheels as the
// archive is written (sitepkgs.Streaming), the same bytes. A refused
// wheel, a wheel whose bytes are not the lock's, or two wheels writing
// one path are errdefs.Invalid, and w has had no byte; a member whose
// bytes are not its RECORD's is errdefs.Invalid too, found as it is
// written (w then holds part of an archive: write to a temporary file).
func BuildArchive(ctx context.Context, lf *lock.File, paths []string, tmp string, w io.Writer) (string, int64, error) {
	ws, err := sitepkgs.WheelsOf(lf, paths)
	if err != nil {
		return "", 0, err
	}
	tree, err := sitepkgs.Stage(ctx, ws, tmp, ArchiveEpoch, sitepkgs.Streaming())
	if err != nil {
		return "", 0, err
	}
	defer tree.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	if err := tree.WriteArchive(ctx, cw, ArchiveEpoch); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// putArchive builds the archive of lf's wheels and uploads it unless the
// store has it. want, when not empty, is the sha256 the archive must have
// (a verified hit repairing a missing archive). It returns the manifest's
// Python half and the bytes sent.
func (s *Store) putArchive(ctx context.Context, lf *lock.File, wheels lock.Jars, want string) (*ManifestPython, int64, error) {
	paths, err := wheels(ctx)
	if err != nil {
		return nil, 0, err
	}
	tmp, err := os.MkdirTemp("", "prebake-archive-")
	if err != nil {
		return nil, 0, errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, ArchiveFile)
	f, err := os.Create(file)
	if err != nil {
		return nil, 0, errdefs.New(errdefs.CantWrite, err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "wheels"), 0o700); err != nil {
		f.Close()
		return nil, 0, errdefs.New(errdefs.CantWrite, err)
	}
	sum, size, err := BuildArchive(ctx, lf, paths, filepath.Join(tmp, "wheels"), f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = errdefs.New(errdefs.CantWrite, cerr)
	}
	if err != nil {
		return nil, 0, err
	}
	if want != "" && sum != want {
		return nil, 0, errdefs.Errorf(errdefs.Invalid, "set %s: the archive of its wheels is %s, the manifest says %s (made by another prebake?); delete the set to bake it again", lf.Hash(), sum, want)
	}
	py := &ManifestPython{Archive: ManifestArchive{Path: ArchivePath(sum), Sha256: sum, Size: size}, Wheels: manifestWheels(lf)}
	key, err := s.archiveKey(py.Archive)
	if err != nil {
		return nil, 0, err
	}
	have, err := s.b.head(ctx, key)
	switch {
	case err == nil && have == size:
		s.o.logger.Printf("set %s: archive %s already there", lf.Hash()[:12], sum[:12])
		return py, 0, nil
	case err == nil:
		return nil, 0, errdefs.Errorf(errdefs.Invalid, "%s: %d bytes in the store, %d built: the store is corrupt; delete the object", s.b.name(key), have, size)
	case !errors.Is(err, ErrNotFound):
		return nil, 0, err
	}
	n, err := s.upload(ctx, key, ManifestJar{File: ArchiveFile, Path: py.Archive.Path, Sha256: sum, Size: size}, file)
	if err != nil {
		return nil, 0, err
	}
	s.o.logger.Printf("set %s: archive %s sent (%d wheels, %d bytes)", lf.Hash()[:12], sum[:12], len(py.Wheels), n)
	return py, n, nil
}

// hasArchive reports whether the store has m's archive with its size.
func (s *Store) hasArchive(ctx context.Context, m *Manifest) (bool, error) {
	key, err := s.archiveKey(m.Python.Archive)
	if err != nil {
		return false, err
	}
	size, err := s.b.head(ctx, key)
	switch {
	case err == nil && size == m.Python.Archive.Size:
		return true, nil
	case err == nil:
		return false, errdefs.Errorf(errdefs.Invalid, "%s: %d bytes in the store, %d in the manifest: the store is corrupt; delete the object", s.b.name(key), size, m.Python.Archive.Size)
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// PythonConf returns the Spark settings that ship m's Python half, in the
// given URL style: spark.archives=<url>#pydeps, and PYTHONPATH=./pydeps
// for the executors (spark.executorEnv), the driver on Kubernetes
// (spark.kubernetes.driverEnv) and on YARN (spark.yarn.appMasterEnv).
// Spark unpacks an archive into the working directory of each executor
// and, in cluster mode, of the driver, where a relative PYTHONPATH entry
// resolves; PySpark puts the environment's PYTHONPATH after its own. Nil
// for a set without wheels. The setting replaces a PYTHONPATH the image
// sets for those processes (pyspark's own path does not come from it).
func (s *Store) PythonConf(ctx context.Context, m *Manifest, style URLStyle) ([][2]string, error) {
	if m.Python == nil {
		return nil, nil
	}
	if err := CheckStyle(style); err != nil {
		return nil, err
	}
	key, err := s.archiveKey(m.Python.Archive)
	if err != nil {
		return nil, err
	}
	u, err := s.b.url(ctx, key, style, s.o.expires)
	if err != nil {
		return nil, err
	}
	rel := "./" + ArchiveName
	return [][2]string{
		{"spark.archives", u + "#" + ArchiveName},
		{"spark.executorEnv.PYTHONPATH", rel},
		{"spark.kubernetes.driverEnv.PYTHONPATH", rel},
		{"spark.yarn.appMasterEnv.PYTHONPATH", rel},
	}, nil
}
