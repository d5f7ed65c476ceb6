package layers

import (
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"strconv"
	"time"

	"github.com/containerd/stargz-snapshotter/estargz"
	"github.com/klauspost/compress/gzip"
	digest "github.com/opencontainers/go-digest"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress/task"
)

// eStargz (CompressionEstargz) is the lazy-pulling format prebake bakes,
// rather than zstd:chunked, because an eStargz layer is a valid tar+gzip
// layer under the plain gzip media type: every runtime and registry takes
// it (containerd's default overlayfs snapshotter pulls it like any gzip
// layer, Docker schema 2 bases included), and stargz-snapshotter (containerd)
// or the additional layer store (CRI-O, Podman) mount it lazily. zstd:chunked
// needs zstd layers (OCI manifests, containerd >= 1.5) and is read lazily
// only by containers/storage and stargz-snapshotter >= 0.13.
//
// The blob is written by the estargz library's streaming Writer (no
// prioritized files, so no landmark entry and no reordering): each file's
// content goes in gzip members of at most estargzChunk bytes, then the
// table of contents (stargz.index.json) and the footer. The layer's
// descriptor carries the TOC digest (AnnotationTOCDigest) and the
// uncompressed size (AnnotationUncompressedSize). The same inputs give the
// same bytes: the entries are prebake's reproducible tar, the content
// compressor is klauspost gzip level 1 (as CompressionGzip) and the TOC's
// is the standard library's gzip level 1; estargzID pins them.

// estargzID names the eStargz writer in the layer and bake keys: library
// version, content and TOC compressors, chunk size.
const estargzID = "estargz-0.19.1-klauspost-gzip-1.20-l1-toc-stdgzip-l1-chunk4m"

// estargzChunk is the largest gzip member of a file's content.
const estargzChunk = 4 << 20

// Layer descriptor annotations of an eStargz layer.
const (
	// AnnotationTOCDigest is the digest of the layer's table of contents
	// (stargz.index.json), which lazy-pulling snapshotters verify.
	AnnotationTOCDigest = estargz.TOCJSONDigestAnnotation
	// AnnotationUncompressedSize is the layer's uncompressed size.
	AnnotationUncompressedSize = estargz.StoreUncompressedSizeAnnotation
)

// estargzCompressor is the estargz Compressor: the content's gzip members
// are klauspost gzip level 1, the TOC's the library's (standard gzip level
// 1); it counts the uncompressed bytes for AnnotationUncompressedSize.
type estargzCompressor struct {
	toc *estargz.GzipCompressor
	n   int64
}

func (c *estargzCompressor) Writer(w io.Writer) (estargz.WriteFlushCloser, error) {
	zw, err := gzip.NewWriterLevel(w, compressionLevel)
	if err != nil {
		return nil, err
	}
	return &countingGzip{Writer: zw, n: &c.n}, nil
}

func (c *estargzCompressor) WriteTOCAndFooter(w io.Writer, off int64, toc *estargz.JTOC, diffHash hash.Hash) (digest.Digest, error) {
	return c.toc.WriteTOCAndFooter(w, off, toc, countingHash{Hash: diffHash, n: &c.n})
}

type countingGzip struct {
	*gzip.Writer
	n *int64
}

func (g *countingGzip) Write(p []byte) (int, error) {
	n, err := g.Writer.Write(p)
	*g.n += int64(n)
	return n, err
}

// countingHash counts what is hashed: the TOC entry's uncompressed bytes.
type countingHash struct {
	hash.Hash
	n *int64
}

func (h countingHash) Write(p []byte) (int, error) {
	*h.n += int64(len(p))
	return h.Hash.Write(p)
}

// estargzLayer streams the tar of entries through the eStargz writer into
// dst, in two goroutines joined by a pipe:
//
//	read + tar ─▶ eStargz (gzip per chunk, TOC, footer) + sha256(blob) + count + dst
//
// The diffID is the writer's (the uncompressed stream holds the TOC entry
// too).
func estargzLayer(ctx context.Context, entries []tarEntry, epoch time.Time, dst io.Writer, task task.Task) (layerDigests, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	var tarErr error
	stage1 := make(chan struct{})
	go func() { // stage 1: read the files, tar
		defer close(stage1)
		tarErr = writeTar(ctx, entries, epoch, io.MultiWriter(pw, taskWriter{task}))
		pw.CloseWithError(tarErr)
	}()
	digH, cw := sha256.New(), &countWriter{}
	comp := &estargzCompressor{toc: estargz.NewGzipCompressorWithLevel(stdgzip.BestSpeed)}
	ew := estargz.NewWriterWithCompressor(io.MultiWriter(digH, cw, dst), comp)
	ew.ChunkSize = estargzChunk
	err := ew.AppendTar(pr)
	var toc digest.Digest
	if err == nil {
		toc, err = ew.Close()
	}
	pr.CloseWithError(errPipeAborted)
	if err != nil {
		cancel()
	}
	<-stage1
	if tarErr != nil && !errors.Is(tarErr, errPipeAborted) {
		return layerDigests{}, tarErr // typed (a jar not the lock's, a short file)
	}
	if err != nil {
		return layerDigests{}, err
	}
	diffID, err := v1.NewHash(ew.DiffID())
	if err != nil {
		return layerDigests{}, errdefs.New(errdefs.Internal, err)
	}
	return layerDigests{digest: sumHash(digH), diffID: diffID, size: cw.n, toc: toc.String(), usize: comp.n}, nil
}

// layerAnnotations are the descriptor annotations of l (eStargz: its TOC
// digest and uncompressed size), or nil.
func layerAnnotations(l *builtLayer) map[string]string {
	if l.toc == "" {
		return nil
	}
	return map[string]string{AnnotationTOCDigest: l.toc, AnnotationUncompressedSize: strconv.FormatInt(l.usize, 10)}
}
