package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/sbom"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/repo"
)

// Option configures Export and Import.
type Option func(*options) error

type options struct {
	epoch       time.Time
	toolVersion string
	layerOpts   []layers.Option
	limits      Limits
	cacheDir    string
	existing    string
	force       bool
	verifier    resolver.SignatureVerifier
}

// WithEpoch sets the tar entries' mtime and the SBOM's timestamp
// (default: layers.Epoch(), SOURCE_DATE_EPOCH or 1970-01-01T00:00:01Z).
func WithEpoch(t time.Time) Option {
	return func(o *options) error { o.epoch = t; return nil }
}

// WithToolVersion sets the SBOM's prebake version.
func WithToolVersion(v string) Option {
	return func(o *options) error { o.toolVersion = v; return nil }
}

// WithLayerOptions are the registry options (credentials, transport) of
// the OCI form.
func WithLayerOptions(opts ...layers.Option) Option {
	return func(o *options) error { o.layerOpts = append(o.layerOpts, opts...); return nil }
}

// WithLimits bounds what Import reads (default DefaultLimits).
func WithLimits(l Limits) Option {
	return func(o *options) error { o.limits = l; return nil }
}

// WithCacheDir is the cache Export reads the jars' signatures from (the
// .asc files cached when they verified; "": the default cache). Every jar
// whose lock entry records a signer (signedBy) goes with its signature.
func WithCacheDir(dir string) Option {
	return func(o *options) error { o.cacheDir = dir; return nil }
}

// WithExistingLock is the lock file Import is to replace: when it exists,
// the bundle's lock must be the same (CheckReplace), else Import refuses
// the bundle before it writes anything (a *LockDiffersError), unless
// WithForce.
func WithExistingLock(path string) Option {
	return func(o *options) error { o.existing = path; return nil }
}

// WithForce lets Import replace an existing lock that differs from the
// bundle's (WithExistingLock).
func WithForce(force bool) Option {
	return func(o *options) error { o.force = force; return nil }
}

// WithSignatures makes Import check every jar's signature against v (the
// pinned keys): each locked jar must record a signer (signedBy) that v
// holds and the bundle must carry its signature, which must verify over
// the jar with that very key. A jar that fails is refused by name
// (errdefs.Invalid, matching pgpverify.ErrSignature or
// ErrSignatureMissing) and nothing is written.
func WithSignatures(v resolver.SignatureVerifier) Option {
	return func(o *options) error { o.verifier = v; return nil }
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{toolVersion: "unknown", limits: DefaultLimits}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.epoch.IsZero() {
		t, err := layers.Epoch()
		if err != nil {
			return nil, err
		}
		o.epoch = t
	}
	return o, nil
}

// Kind is the form of a bundle, from its reference.
type Kind string

// The forms of a bundle.
const (
	KindTar      Kind = "tar"      // FILE.tar
	KindLayout   Kind = "oci"      // oci:DIR[:tag]
	KindRegistry Kind = "registry" // REGISTRY/REPO[:tag]
)

// KindOf is the form ref names: a path ending in .tar is a tar file,
// oci:DIR an OCI image layout, anything else a registry reference.
func KindOf(ref string) Kind {
	switch {
	case strings.HasPrefix(ref, layers.OCIPrefix):
		return KindLayout
	case strings.HasSuffix(ref, ".tar"):
		return KindTar
	}
	return KindRegistry
}

// ExportResult is what Export wrote.
type ExportResult struct {
	// To is where: the tar file, or the OCI reference by digest.
	To   string `json:"to"`
	Kind Kind   `json:"kind"`
	// Digest is sha256:… of the tar file, or of the OCI manifest: the same
	// lock and jars give the same digest.
	Digest   string `json:"digest"`
	LockHash string `json:"lockHash"`
	Jars     int    `json:"jars"`
	// Wheels counts the Python half's wheels (absent for a lock of jars
	// only).
	Wheels int `json:"wheels,omitempty"`
	// Bytes is the size of the files (index, lock, SBOM, jars, wheels,
	// signatures).
	Bytes int64 `json:"bytes"`
	// Signatures counts the jars' signatures the bundle carries.
	Signatures int `json:"signatures"`
}

// contents are a bundle's files in memory (the jars and wheels as paths).
type contents struct {
	index     *Index
	indexData []byte
	lockData  []byte
	sbomData  []byte
	// jars are the blob paths of the jars and wheels, in the order of the
	// index's entries.
	jars   []string
	wheels int
	// sigs are the signatures, in the order of the index's signature
	// entries.
	sigs [][]byte
}

// data is the bytes of the i-th index entry other than a jar.
func (c *contents) data(i int) []byte {
	switch i {
	case 0:
		return c.lockData
	case 1:
		return c.sbomData
	}
	return c.sigs[i-2-len(c.jars)]
}

// ErrSignatureMissing is matched (errors.Is) when a jar whose lock entry
// records a signer has no signature: in the cache Export reads, or in the
// bundle Import checks with WithSignatures.
var ErrSignatureMissing = repo.ErrSignatureMissing

// readSignatures reads, from the cache in cacheDir, the signature of each
// artifact of lf that records a signer, by file name.
func readSignatures(lf *lock.File, cacheDir string) (map[string][]byte, error) {
	cacheDir = blobcache.Dir(cacheDir)
	sigs := map[string][]byte{}
	for _, a := range lf.Artifacts {
		if a.SignedBy == "" {
			continue
		}
		p := repo.SignaturePath(cacheDir, a.Sha256)
		data, err := localfile.Read(p, MaxSignature)
		if errors.Is(err, os.ErrNotExist) {
			return nil, errdefs.Optionf(errdefs.NotFound, "resolver.Request.Signatures", "bundle: artifact %s (%s): %w in the cache (%s), though the lock records its signer %s; the bundle would not carry it: verify the signatures again to fetch it", a.File, a.Coord, ErrSignatureMissing, p, a.SignedBy)
		}
		if err != nil {
			return nil, fmt.Errorf("bundle: artifact %s: signature %w", a.File, err)
		}
		sigs[a.File] = data
	}
	return sigs, nil
}

// assemble builds the index, lock and SBOM of lf, whose artifacts (jars
// and wheels) are at paths (index for index), and sigs the signatures by
// jar file.
func assemble(lf *lock.File, paths []string, sigs map[string][]byte, o *options) (*contents, error) {
	if len(paths) != len(lf.Artifacts) {
		return nil, errdefs.Errorf(errdefs.Internal, "bundle: %d files for %d locked artifacts", len(paths), len(lf.Artifacts))
	}
	if err := lf.Check(); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("bundle: %w", err))
	}
	order := make([]int, len(paths))
	for i := range order {
		order[i] = i
	}
	// Jars, then wheels, each kind by file name.
	slices.SortFunc(order, func(a, b int) int {
		return strings.Compare(blobPath(lf.Artifacts[a]), blobPath(lf.Artifacts[b]))
	})
	c := &contents{}
	var err error
	if c.lockData, err = lf.Marshal(); err != nil {
		return nil, errdefs.New(errdefs.Internal, err)
	}
	b, err := sbom.New(lf, sbom.WithTimestamp(o.epoch), sbom.WithToolVersion(o.toolVersion))
	if err != nil {
		return nil, err
	}
	if c.sbomData, err = b.Marshal(); err != nil {
		return nil, errdefs.New(errdefs.Internal, err)
	}
	c.index = &Index{Version: IndexVersion, LockHash: lf.Hash(), Files: []Entry{entryOf(LockName, c.lockData), entryOf(SBOMName, c.sbomData)}}
	for _, i := range order {
		a := lf.Artifacts[i]
		c.index.Files = append(c.index.Files, Entry{Path: blobPath(a), Sha256: a.Sha256, Size: a.Size})
		c.jars = append(c.jars, paths[i])
		if !a.IsJar() {
			c.wheels++
		}
	}
	for _, i := range order {
		a := lf.Artifacts[i]
		if sig, ok := sigs[a.File]; ok {
			c.index.Files = append(c.index.Files, entryOf(sigPath(a.File), sig))
			c.sigs = append(c.sigs, sig)
		}
	}
	if c.indexData, err = jsonIndent(c.index); err != nil {
		return nil, errdefs.New(errdefs.Internal, err)
	}
	return c, nil
}

// jsonIndent is index.json's form of ix.
func jsonIndent(ix *Index) ([]byte, error) {
	data, err := json.MarshalIndent(ix, "", "  ")
	return append(data, '\n'), err
}

func entryOf(path string, data []byte) Entry {
	s := sha256.Sum256(data)
	return Entry{Path: path, Sha256: hex.EncodeToString(s[:]), Size: int64(len(data))}
}

// Export writes the bundle of lf, whose artifacts (jars and wheels) are at
// paths (index for index with lf.Artifacts), to `to`: FILE.tar (written
// atomically), oci:DIR[:tag] or REGISTRY/REPO[:tag] (tag default: the lock
// hash). Each file is checked against the lock's sha256 and size as it is
// read.
func Export(ctx context.Context, lf *lock.File, paths []string, to string, opts ...Option) (*ExportResult, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	sigs, err := readSignatures(lf, o.cacheDir)
	if err != nil {
		return nil, err
	}
	c, err := assemble(lf, paths, sigs, o)
	if err != nil {
		return nil, err
	}
	res := &ExportResult{Kind: KindOf(to), LockHash: c.index.LockHash, Jars: len(c.jars) - c.wheels, Wheels: c.wheels, Signatures: len(c.sigs), Bytes: int64(len(c.indexData))}
	for _, e := range c.index.Files {
		res.Bytes += e.Size
	}
	if res.Kind == KindTar {
		res.To = to
		res.Digest, err = writeTarFile(ctx, to, c, o.epoch)
		return res, err
	}
	a := c.artifact()
	if res.To, err = layers.PushArtifact(ctx, to, a, o.layerOpts...); err != nil {
		return nil, err
	}
	res.Digest = res.To[strings.LastIndex(res.To, "@")+1:]
	return res, nil
}

// artifact is c as an OCI artifact.
func (c *contents) artifact() *layers.Artifact {
	a := &layers.Artifact{ArtifactType: ArtifactType, ConfigMediaType: IndexMediaType, Config: c.indexData,
		Annotations: map[string]string{LockAnnotation: c.index.LockHash}, Tag: c.index.LockHash}
	for i, e := range c.index.Files {
		b := layers.ArtifactBlob{Title: e.Path, MediaType: mediaType(i, e.Path), Sha256: e.Sha256, Size: e.Size}
		if i >= 2 && i < 2+len(c.jars) {
			path := c.jars[i-2]
			b.Open = func() (io.ReadCloser, error) { return openChecked(path, e) }
		} else {
			b.Open = bytesOpener(c.data(i))
		}
		a.Blobs = append(a.Blobs, b)
	}
	return a
}

func bytesOpener(data []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(data))), nil }
}

// openChecked opens a jar to export; the read that reaches its end fails
// unless its bytes are e's.
func openChecked(path string, e Entry) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("bundle: %s: %w", e.Path, err))
	}
	return &checkedReader{f: f, e: e, h: sha256.New()}, nil
}

type checkedReader struct {
	f *os.File
	e Entry
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
	n int64
}

func (r *checkedReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if err == io.EOF {
		if got := hex.EncodeToString(r.h.Sum(nil)); got != r.e.Sha256 || r.n != r.e.Size {
			return n, errdefs.New(errdefs.Invalid, fmt.Errorf("%w: bundle: %s (%s): sha256 %s size %d, the lock says %s size %d",
				lock.ErrCorruptBlob, r.e.Path, r.f.Name(), got, r.n, r.e.Sha256, r.e.Size))
		}
	}
	return n, err
}

func (r *checkedReader) Close() error { return r.f.Close() }

// writeTarFile writes c as a tar file at path (temp file and rename: a
// failed export leaves nothing) and returns its digest.
func writeTarFile(ctx context.Context, path string, c *contents, epoch time.Time) (string, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".bundle-*.tar")
	if err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %w", path, err))
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, h))
	add := func(name string, size int64, r io.Reader) error {
		if err := ctx.Err(); err != nil {
			return errdefs.New(errdefs.Timeout, fmt.Errorf("bundle %s: %w", path, err))
		}
		hdr := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: epoch, Format: tar.FormatPAX}
		if len(name) <= 100 {
			hdr.Format = tar.FormatUSTAR
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %w", path, err))
		}
		if _, err := io.Copy(tw, r); err != nil {
			if errdefs.KindOf(err) == errdefs.Invalid {
				return err
			}
			if errors.Is(err, tar.ErrWriteTooLong) {
				return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: bundle: %s has more than the %d bytes the lock says", lock.ErrCorruptBlob, name, size))
			}
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %s: %w", path, name, err))
		}
		return nil
	}
	if err := add(IndexName, int64(len(c.indexData)), strings.NewReader(string(c.indexData))); err != nil {
		f.Close()
		return "", err
	}
	if err := add(LockName, int64(len(c.lockData)), strings.NewReader(string(c.lockData))); err != nil {
		f.Close()
		return "", err
	}
	if err := add(SBOMName, int64(len(c.sbomData)), strings.NewReader(string(c.sbomData))); err != nil {
		f.Close()
		return "", err
	}
	for i, e := range c.index.Files[2 : 2+len(c.jars)] {
		rc, err := openChecked(c.jars[i], e)
		if err != nil {
			f.Close()
			return "", err
		}
		err = add(e.Path, e.Size, rc)
		rc.Close()
		if err != nil {
			f.Close()
			return "", err
		}
	}
	for i, sig := range c.sigs {
		e := c.index.Files[2+len(c.jars)+i]
		if err := add(e.Path, e.Size, bytes.NewReader(sig)); err != nil {
			f.Close()
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %w", path, err))
	}
	if err := f.Close(); err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %w", path, err))
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %w", path, err))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: %w", path, err))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
