package layers

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/progress/task"
)

// The pinned gzip compressor: klauspost/compress gzip at level 1
// (BestSpeed). BenchmarkCompressor measures it against compress/gzip; jars
// are already deflated, so a faster level loses almost nothing in size.
// Changing either changes every gzip digest: bump compressorID with it (and
// the zstd id in Compression.id with the library).
const (
	compressionLevel = gzip.BestSpeed
	compressorID     = "klauspost-gzip-1.20-l1"
)

// DefaultEpoch is the mtime of layer entries when SOURCE_DATE_EPOCH is
// unset or empty (as Jib does).
var DefaultEpoch = time.Unix(1, 0).UTC()

// Epoch returns the reproducible mtime: SOURCE_DATE_EPOCH when set and
// non-empty, else DefaultEpoch.
func Epoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return DefaultEpoch, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, errdefs.Errorf(errdefs.BadArgument, "SOURCE_DATE_EPOCH %q: not a number of seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// File is one regular file of a layer built by BuildLayer.
type File struct {
	// Name is the path in the image ("/opt/spark/prebake/jars/x.jar").
	Name string
	// Mode is 0644 or 0755 (other bits are dropped: 0755 if any x bit is set).
	Mode int64
	// Size is the file size; the content must have exactly this size.
	Size int64
	// Open returns the content.
	Open func() (io.ReadCloser, error)
	// ID identifies the content (a sha256) for the layer cache; "" disables
	// caching of the layer that holds the file.
	ID string
}

// FileFromPath is a File whose content is the local file src.
func FileFromPath(name, src string, mode int64, id string) (File, error) {
	st, err := os.Stat(src)
	if err != nil {
		return File{}, errdefs.New(errdefs.NotFound, fmt.Errorf("layer file %s: %w", src, err))
	}
	return File{Name: name, Mode: mode, Size: st.Size(), ID: id, Open: func() (io.ReadCloser, error) { return os.Open(src) }}, nil
}

// tarEntry is a file or a parent directory, by its relative tar name.
type tarEntry struct {
	name string // relative, dirs end in "/"
	file *File
}

// tarEntries sorts the files by name and adds every parent directory.
func tarEntries(files []File) ([]tarEntry, error) {
	seen := map[string]bool{}
	var out []tarEntry
	for i := range files {
		f := &files[i]
		n := strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(f.Name)), "/")
		if n == "" || n == "." {
			return nil, errdefs.Errorf(errdefs.BadArgument, "layer file %q: not a file path", f.Name)
		}
		if seen[n] {
			return nil, errdefs.Errorf(errdefs.Invalid, "layer file %q appears twice", f.Name)
		}
		seen[n] = true
		out = append(out, tarEntry{name: n, file: f})
		for d := path.Dir(n); d != "." && d != "/"; d = path.Dir(d) {
			if !seen[d+"/"] {
				seen[d+"/"] = true
				out = append(out, tarEntry{name: d + "/"})
			}
		}
	}
	slices.SortFunc(out, func(a, b tarEntry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func normMode(m int64) int64 {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// writeTar writes the reproducible tar stream of entries to w.
func writeTar(ctx context.Context, entries []tarEntry, epoch time.Time, w io.Writer) error {
	tw := tar.NewWriter(w)
	buf := make([]byte, 1<<20)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr := &tar.Header{Name: e.name, ModTime: epoch, Uid: 0, Gid: 0}
		if e.file == nil {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return fmt.Errorf("layer entry %s: %w", e.name, err)
			}
			continue
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, normMode(e.file.Mode), e.file.Size
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		rc, err := e.file.Open()
		if err != nil {
			return errdefs.New(errdefs.NotFound, fmt.Errorf("layer entry %s: %w", e.name, err))
		}
		n, err := io.CopyBuffer(tw, struct{ io.Reader }{rc}, buf)
		rc.Close()
		if err != nil {
			if errors.Is(err, tar.ErrWriteTooLong) {
				return errdefs.Errorf(errdefs.Invalid, "layer entry %s: larger than its recorded size %d", e.name, e.file.Size)
			}
			return fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		if n != e.file.Size {
			return errdefs.Errorf(errdefs.Invalid, "layer entry %s: %d bytes, recorded size %d", e.name, n, e.file.Size)
		}
	}
	return tw.Close()
}

// LayerInfo describes a built layer.
type LayerInfo struct {
	Digest string   `json:"digest"` // sha256 of the compressed blob
	DiffID string   `json:"diffID"` // sha256 of the uncompressed tar
	Size   int64    `json:"size"`   // compressed size
	Files  []string `json:"files"`  // file names in the layer (base names for jars)
	// Role is the layer's part in a bake with a shared set: RoleShared,
	// RoleJob or RoleExtra; "" otherwise.
	Role string `json:"role,omitempty"`
}

// builtLayer is a reproducible layer whose bytes were compressed once, by
// one streaming pass that also computed both digests, into a blob file; it
// implements v1.Layer and serves that file to the layout writer or the push
// (never compressing again). A blob taken from the cache by key is checked
// against its digest as it is read.
type builtLayer struct {
	blob   string // path of the compressed blob
	verify bool   // the blob came from the cache: check it as it is read
	digest v1.Hash
	diffID v1.Hash
	size   int64
	mt     types.MediaType
	comp   Compression
	toc    string // eStargz: the TOC digest
	usize  int64  // eStargz: the uncompressed size
}

var _ v1.Layer = (*builtLayer)(nil)

func (l *builtLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *builtLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *builtLayer) Size() (int64, error)                { return l.size, nil }
func (l *builtLayer) MediaType() (types.MediaType, error) { return l.mt, nil }

// Compressed opens the blob. A fresh blob is the *os.File itself, so the
// layout writer copies it in the kernel (copy_file_range).
func (l *builtLayer) Compressed() (io.ReadCloser, error) {
	f, err := l.open()
	if err != nil || !l.verify {
		return f, err
	}
	return &verifyReader{r: f, h: sha256.New(), want: l.digest, size: l.size, blob: l.blob, close: f.Close}, nil
}

// Uncompressed decompresses the blob, verifying its diffID at the end.
func (l *builtLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := l.open()
	if err != nil {
		return nil, err
	}
	zr, zclose, err := l.comp.newReader(f)
	if err != nil {
		f.Close()
		return nil, errdefs.Errorf(errdefs.Invalid, "layer %s: blob %s: %w", l.digest, l.blob, err)
	}
	return &verifyReader{r: zr, h: sha256.New(), want: l.diffID, size: -1, blob: l.blob, close: func() error {
		zclose()
		return f.Close()
	}}, nil
}

func (l *builtLayer) open() (*os.File, error) {
	f, err := os.Open(l.blob)
	if err != nil {
		return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("layer %s: blob removed since it was built (rerun): %w", l.digest, err))
	}
	return f, nil
}

// verifyReader fails the read that reaches EOF when the bytes do not hash to
// want (a cached blob was damaged).
type verifyReader struct {
	r     io.Reader
	h     hash.Hash
	n     int64
	want  v1.Hash
	size  int64
	blob  string
	close func() error
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if err == io.EOF {
		if got := sumHash(v.h); got != v.want || (v.size >= 0 && v.n != v.size) {
			os.Remove(v.blob) // the next bake builds it again
			return n, errdefs.Errorf(errdefs.Invalid, "layer blob %s: does not match %s (it is %s, %d bytes): removed it, rerun", v.blob, v.want, got, v.n)
		}
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.close() }

// taskWriter reports bytes written to a progress task.
type taskWriter struct{ t task.Task }

func (w taskWriter) Write(p []byte) (int, error) { w.t.Add(int64(len(p))); return len(p), nil }

// countWriter counts bytes.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// compressLayer streams the tar of entries through sha256 (diffID), the
// compressor and sha256 (digest) into dst, in three goroutines joined by
// chunk pipes, so the stages overlap (on 2 cores the compressor stage has
// one to itself and sets the pace):
//
//	read + tar + sha256(tar) ─▶ compress ─▶ sha256(blob) + count + dst
//
// Without compression the tar is the blob, hashed once (the digest is the
// diffID) as it is written, in one goroutine: read + tar + sha256 + dst.
// (BenchmarkCompression: a two-stage pipeline here cost about 10 % more CPU
// for the same wall time, the copies between the stages outweighing the
// overlap on 2 busy cores.)
func compressLayer(ctx context.Context, entries []tarEntry, epoch time.Time, comp Compression, dst io.Writer, task task.Task) (layerDigests, error) {
	if comp == CompressionEstargz {
		return estargzLayer(ctx, entries, epoch, dst, task)
	}
	if comp == CompressionNone {
		h, cw := sha256.New(), &countWriter{}
		if err := writeTar(ctx, entries, epoch, io.MultiWriter(h, cw, dst, taskWriter{task})); err != nil {
			return layerDigests{}, err
		}
		d := sumHash(h)
		return layerDigests{digest: d, diffID: d, size: cw.n}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const chunks, chunkSize = 4, 1 << 20
	tarP, blobP := newChunkPipe(chunks, chunkSize), newChunkPipe(chunks, chunkSize)
	diffH := sha256.New()
	stage1 := make(chan struct{})
	go func() { // stage 1: read the files, tar, sha256 (diffID)
		defer close(stage1)
		tarP.CloseWrite(writeTar(ctx, entries, epoch, io.MultiWriter(diffH, tarP, taskWriter{task})))
	}()
	go func() { // stage 2: compress
		zw, err := comp.newWriter(blobP)
		if err == nil {
			if _, err = tarP.WriteTo(zw); err == nil {
				err = zw.Close()
			}
		}
		tarP.CloseRead(errPipeAborted)
		blobP.CloseWrite(err)
	}()
	// stage 3: sha256 (digest), count, write
	digH := sha256.New()
	cw := &countWriter{}
	_, err := blobP.WriteTo(io.MultiWriter(digH, cw, dst))
	blobP.CloseRead(errPipeAborted)
	if err != nil {
		cancel()
		<-stage1
		return layerDigests{}, err
	}
	<-stage1 // diffH is complete (the compressor saw the end of the tar, so it is)
	return layerDigests{digest: sumHash(digH), diffID: sumHash(diffH), size: cw.n}, nil
}

func sumHash(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

// cacheKey names a layer by everything that decides its bytes, or "" when
// some file has no content ID.
func cacheKey(entries []tarEntry, epoch time.Time, comp Compression) string {
	h := sha256.New()
	fmt.Fprintf(h, "prebake-layer-v1\n%s\n%d\n", comp.id(), epoch.Unix())
	for _, e := range entries {
		if e.file == nil {
			fmt.Fprintf(h, "d %s\n", e.name)
			continue
		}
		if e.file.ID == "" {
			return ""
		}
		fmt.Fprintf(h, "f %s %o %d %s\n", e.name, normMode(e.file.Mode), e.file.Size, e.file.ID)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// blobPath is where the blob of digest d lives under dir.
func blobPath(dir string, d v1.Hash) string {
	return filepath.Join(dir, "blobs", d.Algorithm, d.Hex)
}

// buildLayer builds the layer of files: one streaming pass computes both
// digests and writes the compressed blob, content-addressed, into
// cacheDir/layers (reused by a content key on the next bake) or, when there
// is no cache or some file has no ID, into the bake's temporary directory.
func buildLayer(ctx context.Context, files []File, epoch time.Time, o *options) (*builtLayer, error) {
	entries, err := tarEntries(files)
	if err != nil {
		return nil, err
	}
	mt, err := o.compression.mediaType(false)
	if err != nil {
		return nil, err
	}
	l := &builtLayer{mt: mt, comp: o.compression}
	dir, key := "", ""
	if o.cacheDir != "" {
		key = cacheKey(entries, epoch, o.compression)
	}
	if key != "" {
		// The user's cache (a shared cache directory holds one per user),
		// used only when it and every directory above it are the user's
		// or root's and open to no one else (else: no layer cache).
		dir = cachedir.At(o.cacheDir).Dir(cachedir.DirLayers)
		if err := cachedir.Make(dir); err != nil && !cachedir.Tolerable(err) {
			key = ""
		} else {
			// The temp files of killed bakes, layer cache hit or not.
			sweepTemps(filepath.Join(dir, "blobs", "sha256"), time.Now())
		}
	}
	if key != "" {
		if m, ok := readCachedLayer(dir, key); ok && (m.toc != "") == (o.compression == CompressionEstargz) {
			l.digest, l.diffID, l.size, l.toc, l.usize = m.digest, m.diffID, m.size, m.toc, m.usize
			l.blob, l.verify = blobPath(dir, m.digest), true
			return l, nil
		}
	} else if dir, err = o.tempDir(); err != nil {
		return nil, err
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	task := o.startTask(fmt.Sprintf("layer (%d files)", len(files)), total)
	m, blob, err := writeLayerBlob(ctx, entries, epoch, o.compression, dir, task)
	task.Done(err)
	if err != nil {
		return nil, err
	}
	l.digest, l.diffID, l.size, l.blob, l.toc, l.usize = m.digest, m.diffID, m.size, blob, m.toc, m.usize
	o.fresh = append(o.fresh, l)
	if key != "" {
		writeCachedLayer(dir, key, l)
	}
	return l, nil
}

// writeLayerBlob compresses the layer into a temporary file under dir and
// renames it to its content address.
func writeLayerBlob(ctx context.Context, entries []tarEntry, epoch time.Time, comp Compression, dir string, task task.Task) (layerDigests, string, error) {
	bdir := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return layerDigests{}, "", errdefs.New(errdefs.CantWrite, fmt.Errorf("layer cache %s: %w", dir, err))
	}
	sweepTemps(bdir, time.Now()) // the temp files of killed bakes (once per process)
	f, err := createTemp(bdir)
	if err != nil {
		return layerDigests{}, "", errdefs.New(errdefs.CantWrite, fmt.Errorf("layer cache %s: %w", dir, err))
	}
	defer os.Remove(f.Name()) // after a rename, a no-op
	m, err := compressLayer(ctx, entries, epoch, comp, f, task)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = errdefs.New(errdefs.CantWrite, fmt.Errorf("layer blob %s: %w", f.Name(), cerr))
	}
	if err != nil {
		var ee *errdefs.Error
		if errors.As(err, &ee) || ctx.Err() != nil {
			return layerDigests{}, "", err
		}
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == f.Name() {
			return layerDigests{}, "", errdefs.New(errdefs.CantWrite, fmt.Errorf("layer blob in %s: %w", dir, err))
		}
		return layerDigests{}, "", errdefs.New(errdefs.Internal, fmt.Errorf("building layer: %w", err))
	}
	blob := blobPath(dir, m.digest)
	if err := os.Rename(f.Name(), blob); err != nil {
		return layerDigests{}, "", errdefs.New(errdefs.CantWrite, fmt.Errorf("layer blob %s: %w", blob, err))
	}
	return m, blob, nil
}

type cachedLayerMeta struct {
	Digest string `json:"digest"`
	DiffID string `json:"diffID"`
	Size   int64  `json:"size"`
	TOC    string `json:"toc,omitempty"`
	USize  int64  `json:"uncompressedSize,omitempty"`
}

type layerDigests struct {
	digest, diffID v1.Hash
	size           int64
	toc            string // eStargz only
	usize          int64  // eStargz only
}

// readCachedLayer finds the layer of key in dir: its digests, and a blob of
// the recorded size.
func readCachedLayer(dir, key string) (layerDigests, bool) {
	data, err := os.ReadFile(filepath.Join(dir, key+".json"))
	if err != nil {
		return layerDigests{}, false
	}
	var m cachedLayerMeta
	if json.Unmarshal(data, &m) != nil {
		return layerDigests{}, false
	}
	d, err1 := v1.NewHash(m.Digest)
	di, err2 := v1.NewHash(m.DiffID)
	if err1 != nil || err2 != nil || m.Size <= 0 {
		return layerDigests{}, false
	}
	if st, err := os.Stat(blobPath(dir, d)); err != nil || !st.Mode().IsRegular() || st.Size() != m.Size {
		return layerDigests{}, false
	}
	// A hit is a use: prebake cache prune ages layers by their key file.
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, key+".json"), now, now)
	return layerDigests{digest: d, diffID: di, size: m.Size, toc: m.TOC, usize: m.USize}, true
}

func writeCachedLayer(dir, key string, l *builtLayer) {
	data, _ := json.Marshal(cachedLayerMeta{Digest: l.digest.String(), DiffID: l.diffID.String(), Size: l.size, TOC: l.toc, USize: l.usize})
	_ = atomicfile.Write(filepath.Join(dir, key+".json"), data, 0o600) // best effort: a cache
}

// linkBlobs hard-links the blobs this call wrote into the OCI layout at dir,
// so writing the layout finds them there (ggcr skips a blob of the right
// size) instead of copying them. It is best effort: across file systems, or
// where links are not allowed, ggcr copies the blob. Blobs reused from the
// cache are not linked: they are copied, and verified as they are read.
func linkBlobs(dir string, o *options) {
	for _, l := range o.fresh {
		dst := blobPath(dir, l.digest)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if os.MkdirAll(filepath.Dir(dst), 0o755) != nil {
			return
		}
		os.Link(l.blob, dst)
	}
}
