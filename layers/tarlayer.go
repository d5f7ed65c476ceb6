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

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
)

// The pinned compressor: klauspost/compress gzip at level 1 (BestSpeed).
// BenchmarkCompressor measures it against compress/gzip; jars are already
// deflated, so a faster level loses almost nothing in size. Changing either
// changes every baked digest: bump compressorID with it.
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
		return time.Time{}, exitcode.Errorf(exitcode.Usage, "SOURCE_DATE_EPOCH %q: not a number of seconds", s)
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
		return File{}, exitcode.New(exitcode.NotFound, fmt.Errorf("layer file %s: %w", src, err))
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
			return nil, exitcode.Errorf(exitcode.Usage, "layer file %q: not a file path", f.Name)
		}
		if seen[n] {
			return nil, exitcode.Errorf(exitcode.DataErr, "layer file %q appears twice", f.Name)
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
			return exitcode.New(exitcode.NotFound, fmt.Errorf("layer entry %s: %w", e.name, err))
		}
		n, err := io.CopyBuffer(tw, struct{ io.Reader }{rc}, buf)
		rc.Close()
		if err != nil {
			if errors.Is(err, tar.ErrWriteTooLong) {
				return exitcode.Errorf(exitcode.DataErr, "layer entry %s: larger than its recorded size %d", e.name, e.file.Size)
			}
			return fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		if n != e.file.Size {
			return exitcode.Errorf(exitcode.DataErr, "layer entry %s: %d bytes, recorded size %d", e.name, n, e.file.Size)
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
}

// builtLayer is a reproducible layer whose digests were computed by one
// streaming pass; it implements v1.Layer. Its bytes are produced again, on
// demand, from the same files when a blob must be uploaded or written (the
// compressor is deterministic), and checked against the digest as they go:
// no compressed copy of the jars is kept on disk.
type builtLayer struct {
	entries []tarEntry
	epoch   time.Time
	digest  v1.Hash
	diffID  v1.Hash
	size    int64
	mt      types.MediaType
}

var _ v1.Layer = (*builtLayer)(nil)

func (l *builtLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *builtLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *builtLayer) Size() (int64, error)                { return l.size, nil }
func (l *builtLayer) MediaType() (types.MediaType, error) { return l.mt, nil }

// Compressed streams the gzip blob again, verifying its digest at the end.
func (l *builtLayer) Compressed() (io.ReadCloser, error) {
	return l.stream(true, l.digest, l.size)
}

// Uncompressed streams the tar again, verifying its diffID at the end.
func (l *builtLayer) Uncompressed() (io.ReadCloser, error) {
	return l.stream(false, l.diffID, -1)
}

func (l *builtLayer) stream(compressed bool, want v1.Hash, size int64) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() {
		var err error
		if compressed {
			var zw *gzip.Writer
			if zw, err = gzip.NewWriterLevel(pw, compressionLevel); err == nil {
				if err = writeTar(ctx, l.entries, l.epoch, zw); err == nil {
					err = zw.Close()
				}
			}
		} else {
			err = writeTar(ctx, l.entries, l.epoch, pw)
		}
		pw.CloseWithError(err)
	}()
	return &verifyReader{r: pr, h: sha256.New(), want: want, size: size, close: func() error {
		cancel()
		return pr.Close()
	}}, nil
}

// verifyReader fails the read that reaches EOF when the bytes do not hash to
// want (a jar changed in the cache since the digests were computed).
type verifyReader struct {
	r     io.Reader
	h     hash.Hash
	n     int64
	want  v1.Hash
	size  int64
	close func() error
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if err == io.EOF {
		if got := sumHash(v.h); got != v.want || (v.size >= 0 && v.n != v.size) {
			return n, exitcode.Errorf(exitcode.DataErr, "layer %s: the files changed since it was built (now %s, %d bytes): rerun", v.want, got, v.n)
		}
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.close() }

// taskWriter reports bytes written to a progress task.
type taskWriter struct{ t progress.Task }

func (w taskWriter) Write(p []byte) (int, error) { w.t.Add(int64(len(p))); return len(p), nil }

// countWriter counts bytes.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// compressLayer streams the tar of entries through sha256 (diffID), the
// pinned gzip and sha256 (digest) into dst, in three stages that overlap.
func compressLayer(ctx context.Context, entries []tarEntry, epoch time.Time, dst io.Writer, task progress.Task) (digest, diffID v1.Hash, size int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const chunks, chunkSize = 4, 1 << 20
	tarP, gzP := newChunkPipe(chunks, chunkSize), newChunkPipe(chunks, chunkSize)
	diffH := sha256.New()
	go func() { // stage 1: read the files, tar, sha256 (diffID)
		tarP.CloseWrite(writeTar(ctx, entries, epoch, io.MultiWriter(diffH, tarP, taskWriter{task})))
	}()
	go func() { // stage 2: gzip
		zw, err := gzip.NewWriterLevel(gzP, compressionLevel)
		if err == nil {
			if _, err = tarP.WriteTo(zw); err == nil {
				err = zw.Close()
			}
		}
		tarP.CloseRead(errPipeAborted)
		gzP.CloseWrite(err)
	}()
	// stage 3: sha256 (digest), count, write
	digH := sha256.New()
	cw := &countWriter{}
	_, err = gzP.WriteTo(io.MultiWriter(digH, cw, dst))
	gzP.CloseRead(errPipeAborted)
	if err != nil {
		cancel()
		return v1.Hash{}, v1.Hash{}, 0, err
	}
	return sumHash(digH), sumHash(diffH), cw.n, nil
}

func sumHash(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

// cacheKey names a layer by everything that decides its bytes, or "" when
// some file has no content ID.
func cacheKey(entries []tarEntry, epoch time.Time) string {
	h := sha256.New()
	fmt.Fprintf(h, "prebake-layer-v1\n%s\n%d\n", compressorID, epoch.Unix())
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

// buildLayer computes the digests of the layer of files in one streaming
// pass (or finds them in cacheDir/layers by content key).
func buildLayer(ctx context.Context, files []File, epoch time.Time, mt types.MediaType, o *options) (*builtLayer, error) {
	entries, err := tarEntries(files)
	if err != nil {
		return nil, err
	}
	l := &builtLayer{entries: entries, epoch: epoch, mt: mt}
	dir, key := "", ""
	if o.cacheDir != "" {
		dir = filepath.Join(o.cacheDir, "layers")
		key = cacheKey(entries, epoch)
	}
	if key != "" {
		if m, ok := readCachedLayer(dir, key); ok {
			l.digest, l.diffID, l.size = m.digest, m.diffID, m.size
			return l, nil
		}
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	task := o.startTask(fmt.Sprintf("layer (%d files)", len(files)), total)
	l.digest, l.diffID, l.size, err = compressLayer(ctx, entries, epoch, io.Discard, task)
	task.Done(err)
	if err != nil {
		var ee *exitcode.Error
		if errors.As(err, &ee) || ctx.Err() != nil {
			return nil, err
		}
		return nil, exitcode.New(exitcode.Internal, fmt.Errorf("building layer: %w", err))
	}
	if key != "" {
		writeCachedLayer(dir, key, l)
	}
	return l, nil
}

type cachedLayerMeta struct {
	Digest string `json:"digest"`
	DiffID string `json:"diffID"`
	Size   int64  `json:"size"`
}

type layerDigests struct {
	digest, diffID v1.Hash
	size           int64
}

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
	return layerDigests{digest: d, diffID: di, size: m.Size}, true
}

func writeCachedLayer(dir, key string, l *builtLayer) {
	data, _ := json.Marshal(cachedLayerMeta{Digest: l.digest.String(), DiffID: l.diffID.String(), Size: l.size})
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp := filepath.Join(dir, "."+key+".json.tmp")
	if os.WriteFile(tmp, data, 0o644) == nil {
		os.Rename(tmp, filepath.Join(dir, key+".json"))
	}
}
