package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	blobcache "github.com/prebake/prebake/resolver/cache"
)

// ImportResult is what Import verified and wrote.
type ImportResult struct {
	From string `json:"from"`
	Kind Kind   `json:"kind"`
	// Lock is the bundle's lock; LockData its bytes, as the bundle holds
	// them (the sha256 its index names).
	Lock     *lock.File `json:"-"`
	LockData []byte     `json:"-"`
	LockHash string     `json:"lockHash"`
	SBOM     []byte     `json:"-"`
	// Paths are the cache paths of the lock's artifacts (jars and
	// wheels), in lock order.
	Paths []string `json:"-"`
	Jars  int      `json:"jars"`
	// Wheels counts the Python half's wheels, now in the cache (absent
	// for a lock of jars only).
	Wheels int `json:"wheels,omitempty"`
	// Bytes is the size of the files (index, lock, SBOM, jars, wheels,
	// signatures), as ExportResult.Bytes.
	Bytes int64 `json:"bytes"`
	// Signatures counts the jars' signatures the bundle carried, now in
	// the cache.
	Signatures int `json:"signatures"`
}

// source reads one form of bundle: its index, then each file in the
// index's order, then checks that nothing follows.
type source interface {
	index() ([]byte, error)
	// open returns the i-th file of the index, e (at most e.Size+1 bytes
	// are read from it); the caller closes it.
	open(i int, e Entry) (io.ReadCloser, error)
	finish() error
	close()
}

// Import reads the bundle `from` (FILE.tar, oci:DIR[:tag|@digest] or a
// registry reference), verifies it and puts its jars into the cache in
// cacheDir, making no request to any repository: the index (ParseIndex),
// the lock's sha256 and lock hash against the index, every jar of the
// index against the lock, the SBOM against the lock (checkSBOM), every
// file's bytes against its sha256 and size, and with WithExistingLock the
// lock against the one it would replace (CheckReplace), with
// WithSignatures every jar's signature against the pinned keys. A bundle
// with a file that is extra, missing, out of order, of another size or
// sha256 is refused (ErrBadBundle, errdefs.Invalid) naming the file, and
// the cache is left as it was: the files are staged (stage.go) and moved
// into the cache only once every one is verified. The signatures the
// bundle carries go where a frozen, offline run with signatures verified
// finds them (<cache>/signatures/sha256/<jar sha256>.asc). A registry
// repository without a tag or digest is read at the tag Export gives
// (resolveRef), never at "latest"; ImportResult.From names the tag.
func Import(ctx context.Context, from, cacheDir string, opts ...Option) (*ImportResult, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	from, byLock, err := resolveRef(ctx, from, o)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{From: from, Kind: KindOf(from)}
	var src source
	switch res.Kind {
	case KindTar:
		src, err = openTar(from, o.limits)
	default:
		if src, err = openArtifact(ctx, from, o); err != nil && byLock {
			err = lockTagMissing(err, o)
		}
	}
	if err != nil {
		return nil, err
	}
	defer src.close()
	data, err := src.index()
	if err != nil {
		return nil, err
	}
	ix, err := ParseIndex(from, data, o.limits)
	if err != nil {
		return nil, err
	}
	if s, ok := src.(interface{ check(*Index) error }); ok {
		if err := s.check(ix); err != nil {
			return nil, err
		}
	}
	res.LockData, err = readSmall(src, 0, ix.Files[0], from)
	if err != nil {
		return nil, err
	}
	if res.Lock, err = lock.Parse(LockName, res.LockData); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("%w %s: %w", ErrBadBundle, from, err))
	}
	if err := ix.checkLock(from, res.Lock); err != nil {
		return nil, err
	}
	if o.existing != "" && !o.force {
		if err := CheckReplace(o.existing, res.Lock, from); err != nil {
			return nil, err
		}
	}
	if o.verifier != nil {
		if err := checkSigners(from, o.verifier, res.Lock, ix); err != nil {
			return nil, err
		}
	}
	if res.SBOM, err = readSmall(src, 1, ix.Files[1], from); err != nil {
		return nil, err
	}
	if err := checkSBOM(from, res.SBOM, res.Lock); err != nil {
		return nil, err
	}
	cacheDir = blobcache.Dir(cacheDir)
	st, err := newStaging(cacheDir)
	if err != nil {
		return nil, err
	}
	defer st.remove()
	jars := ix.blobs()
	for i, e := range jars {
		if err := ctx.Err(); err != nil {
			return nil, errdefs.New(errdefs.Timeout, fmt.Errorf("bundle %s: %w", from, err))
		}
		r, err := src.open(i+2, e)
		if err != nil {
			return nil, err
		}
		sr := &sourceReader{r: r}
		err = st.staged.Add(e.Path, sr, e.Sha256, e.Size)
		r.Close()
		if err != nil {
			if sr.err != nil && errors.Is(sr.err, ErrBadBundle) {
				// The source's own error names the bundle and the file.
				return nil, sr.err
			}
			if errdefs.KindOf(err) == errdefs.Invalid {
				return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("%w %s: %w", ErrBadBundle, from, err))
			}
			return nil, err
		}
	}
	sigs := map[string][]byte{} // by jar file
	for i, e := range ix.sigs() {
		sig, err := readSmall(src, 2+len(jars)+i, e, from)
		if err != nil {
			return nil, err
		}
		sigs[strings.TrimSuffix(strings.TrimPrefix(e.Path, SigDir), SigExt)] = sig
	}
	if err := src.finish(); err != nil {
		return nil, err
	}
	staged, err := st.staged.Commit()
	if err != nil {
		return nil, err
	}
	stagedBySum := map[string]string{}
	for i, e := range jars {
		stagedBySum[e.Sha256] = staged[i]
	}
	if o.verifier != nil {
		if err := verifySignatures(from, o.verifier, res.Lock, stagedBySum, sigs); err != nil {
			return nil, err
		}
	}
	for _, e := range jars {
		if err := st.move(stagedBySum[e.Sha256], e.Sha256, e.Size); err != nil {
			return nil, err
		}
	}
	for _, a := range res.Lock.Artifacts {
		if sig, ok := sigs[a.File]; ok {
			if err := st.putSignature(a.Sha256, sig, o.verifier != nil); err != nil {
				return nil, err
			}
		}
	}
	for _, a := range res.Lock.Artifacts {
		res.Paths = append(res.Paths, blobcache.BlobPath(cacheDir, a.Sha256))
	}
	res.Wheels = len(res.Lock.Wheels())
	res.LockHash, res.Jars, res.Signatures, res.Bytes = ix.LockHash, len(jars)-res.Wheels, len(sigs), int64(len(data))
	for _, e := range ix.Files {
		res.Bytes += e.Size
	}
	return res, nil
}

// sourceReader keeps the source's error (a truncated tar, a blob the
// registry fails to verify): the staging wraps what it reads with the
// file's name, and the source's error names it already.
type sourceReader struct {
	r   io.Reader
	err error
}

func (r *sourceReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// readSmall reads the i-th file (lock or SBOM) into memory, checked.
func readSmall(src source, i int, e Entry, name string) ([]byte, error) {
	r, err := src.open(i, e)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, e.Size+1))
	if errors.Is(err, ErrBadBundle) {
		return nil, err // it names the bundle and the file
	}
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %s: %w", name, e.Path, err)
	}
	if int64(len(data)) != e.Size {
		return nil, bad(name, "%s has %d bytes, the index says %d", e.Path, len(data), e.Size)
	}
	if s := sha256.Sum256(data); hex.EncodeToString(s[:]) != e.Sha256 {
		return nil, bad(name, "%s: sha256 %s, the index says %s", e.Path, hex.EncodeToString(s[:]), e.Sha256)
	}
	return data, nil
}

// maxTrailer is how many zero bytes may follow a tar's end (tar pads its
// output to a 10 KiB record).
const maxTrailer = 10240

// tarSource reads FILE.tar: index.json first, then the files in order.
type tarSource struct {
	name string
	f    io.ReadCloser
	cr   *countReader
	tr   *tar.Reader
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// tarOverhead bounds the tar's own bytes per file (a header, PAX
// records, padding).
const tarOverhead = 4096

// openTar opens FILE.tar, refusing one larger than lim allows.
func openTar(path string, lim Limits) (*tarSource, error) {
	max := lim.Total + MaxIndex + lock.MaxSize + MaxSBOM + int64(lim.Entries+3)*tarOverhead + maxTrailer
	f, err := localfile.Open(path, max)
	if err != nil {
		return nil, fmt.Errorf("bundle %w", err)
	}
	cr := &countReader{r: f}
	return &tarSource{name: path, f: f, cr: cr, tr: tar.NewReader(cr)}, nil
}

// next reads the next header, which must be a regular file named want of
// size bytes.
func (s *tarSource) next(want string, size int64, max int64) error {
	hdr, err := s.tr.Next()
	if err == io.EOF {
		return bad(s.name, "%s is missing (the tar ends before it)", want)
	}
	if err != nil {
		return bad(s.name, "reading the tar before %s: %v", want, err)
	}
	if hdr.Name != want {
		return bad(s.name, "unexpected file %s (the index says %s comes next)", coordpart.Quote(hdr.Name), want)
	}
	if hdr.Typeflag != tar.TypeReg {
		return bad(s.name, "%s is not a regular file (tar type %q)", want, hdr.Typeflag)
	}
	if size >= 0 && hdr.Size != size {
		return bad(s.name, "%s has %d bytes, the index says %d", want, hdr.Size, size)
	}
	if hdr.Size > max {
		return bad(s.name, "%s has %d bytes, more than %d", want, hdr.Size, max)
	}
	return nil
}

func (s *tarSource) index() ([]byte, error) {
	if err := s.next(IndexName, -1, MaxIndex); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(s.tr, MaxIndex+1))
	if err != nil {
		return nil, bad(s.name, "%s: %v", IndexName, err)
	}
	return data, nil
}

func (s *tarSource) open(_ int, e Entry) (io.ReadCloser, error) {
	if err := s.next(e.Path, e.Size, e.Size); err != nil {
		return nil, err
	}
	return io.NopCloser(&tarFile{s: s, path: e.Path}), nil
}

// tarFile reports a tar that ends inside a file as a bad bundle.
type tarFile struct {
	s    *tarSource
	path string
}

func (f *tarFile) Read(p []byte) (int, error) {
	n, err := f.s.tr.Read(p)
	if err != nil && err != io.EOF {
		err = bad(f.s.name, "%s: %v", f.path, err)
	}
	return n, err
}

// finish checks that no file follows the last one, and that at most a
// record's padding of zeros follows the tar's end.
func (s *tarSource) finish() error {
	hdr, err := s.tr.Next()
	switch {
	case err == nil:
		return bad(s.name, "extra file %s is not in the index", coordpart.Quote(hdr.Name))
	case err != io.EOF:
		return bad(s.name, "after the last file: %v", err)
	}
	rest, err := io.ReadAll(io.LimitReader(s.cr, maxTrailer+1))
	if err != nil {
		return fmt.Errorf("bundle %s: %w", s.name, err)
	}
	if len(rest) > maxTrailer || bytes.ContainsFunc(rest, func(r rune) bool { return r != 0 }) {
		return bad(s.name, "data after the tar's end (the bundle is bigger than its index says)")
	}
	return nil
}

func (s *tarSource) close() { s.f.Close() }

// artifactSource reads the OCI form: the config is the index, the blobs
// the files.
type artifactSource struct {
	name string
	a    *layers.PulledArtifact
}

func openArtifact(ctx context.Context, ref string, o *options) (*artifactSource, error) {
	a, err := layers.PullArtifact(ctx, ref, MaxManifest, MaxIndex, o.layerOpts...)
	if err != nil {
		return nil, err
	}
	if a.ArtifactType != ArtifactType {
		return nil, bad(ref, "artifactType %s is not %s", coordpart.Quote(a.ArtifactType), ArtifactType)
	}
	if a.ConfigMediaType != IndexMediaType {
		return nil, bad(ref, "config media type %s is not %s", coordpart.Quote(a.ConfigMediaType), IndexMediaType)
	}
	return &artifactSource{name: ref, a: a}, nil
}

func (s *artifactSource) index() ([]byte, error) { return s.a.Config, nil }

// check matches the manifest's blobs with the index, one for one.
func (s *artifactSource) check(ix *Index) error {
	for i, b := range s.a.Blobs {
		if i >= len(ix.Files) {
			return bad(s.name, "extra blob %s (%s) is not in the index", coordpart.Quote(b.Title), b.Sha256)
		}
		e := ix.Files[i]
		switch {
		case b.Title != e.Path:
			return bad(s.name, "blob %d is %s, the index says %s", i, coordpart.Quote(b.Title), e.Path)
		case b.Sha256 != e.Sha256 || b.Size != e.Size:
			return bad(s.name, "blob %s: sha256 %s size %d, the index says %s size %d", e.Path, b.Sha256, b.Size, e.Sha256, e.Size)
		case b.MediaType != mediaType(i, e.Path):
			return bad(s.name, "blob %s: media type %s is not %s", e.Path, coordpart.Quote(b.MediaType), mediaType(i, e.Path))
		}
	}
	if len(s.a.Blobs) < len(ix.Files) {
		return bad(s.name, "%s is missing (the manifest has %d blobs, the index %d files)", ix.Files[len(s.a.Blobs)].Path, len(s.a.Blobs), len(ix.Files))
	}
	return nil
}

func (s *artifactSource) open(i int, e Entry) (io.ReadCloser, error) {
	rc, err := s.a.Blobs[i].Open()
	if err != nil {
		return nil, err
	}
	return &blobFile{rc: rc, name: s.name, path: e.Path}, nil
}

// blobFile reports a blob the registry fails to verify as a bad bundle.
type blobFile struct {
	rc         io.ReadCloser
	name, path string
}

func (b *blobFile) Close() error { return b.rc.Close() }

func (b *blobFile) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		var ee *errdefs.Error
		if err != io.EOF && !errors.As(err, &ee) {
			// A registry's digest check (go-containerregistry's verify)
			// fails the read: the blob is not what the manifest says.
			err = bad(b.name, "%s: %v", b.path, err)
		}
	}
	return n, err
}

func (s *artifactSource) finish() error { return nil }
func (s *artifactSource) close()        {}
