package layers

import (
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
)

// Compression is how the layers prebake builds are compressed. Jars are
// zip files (already deflated): compression saves under 1 % of their bytes,
// so it buys little and costs a compressor pass and a second hash.
type Compression string

const (
	// CompressionNone writes plain tar layers (OCI
	// application/vnd.oci.image.layer.v1.tar, Docker
	// application/vnd.docker.image.rootfs.diff.tar): one pass over the
	// bytes, one sha256 (the digest is the diffID).
	CompressionNone Compression = "none"
	// CompressionGzip writes tar+gzip layers (klauspost/compress gzip level
	// 1), which every runtime and registry pulls.
	CompressionGzip Compression = "gzip"
	// CompressionZstd writes tar+zstd layers (klauspost/compress zstd,
	// SpeedFastest, one encoder goroutine); OCI manifests only.
	CompressionZstd Compression = "zstd"
	// CompressionEstargz writes eStargz layers (estargz.go): tar+gzip that
	// every runtime pulls as a gzip layer, made of one gzip member per file
	// chunk plus a table of contents, so a lazy-pulling snapshotter
	// (stargz-snapshotter) mounts the image before its layers are fetched.
	CompressionEstargz Compression = "estargz"
)

// DefaultCompression is the compression of a bake without WithCompression:
// chosen from BenchmarkCompression (README, "make bench").
const DefaultCompression = CompressionNone

// Compressions lists the accepted values, default first.
var Compressions = []Compression{CompressionNone, CompressionGzip, CompressionZstd, CompressionEstargz}

// ParseCompression parses a compression name ("" is the default).
func ParseCompression(s string) (Compression, error) {
	if s == "" {
		return DefaultCompression, nil
	}
	for _, c := range Compressions {
		if strings.EqualFold(s, string(c)) {
			return c, nil
		}
	}
	names := make([]string, len(Compressions))
	for i, c := range Compressions {
		names[i] = string(c)
	}
	return "", errdefs.Optionf(errdefs.BadArgument, "layers.WithCompression", "compression %q: want one of %s", s, strings.Join(names, ", "))
}

// id names the compressor and its pinned settings in the layer and bake
// keys: a change of library version or level changes the bytes, so it must
// change the id.
func (c Compression) id() string {
	switch c {
	case CompressionNone:
		return "tar"
	case CompressionZstd:
		return "klauspost-zstd-1.20-fastest-c1"
	case CompressionEstargz:
		return estargzID
	default:
		return compressorID
	}
}

// mediaType is the layer media type for an image manifest of kind docker
// (Docker schema 2) or OCI.
func (c Compression) mediaType(docker bool) (types.MediaType, error) {
	switch {
	case c == CompressionNone && docker:
		return types.DockerUncompressedLayer, nil
	case c == CompressionNone:
		return types.OCIUncompressedLayer, nil
	case c == CompressionZstd && docker:
		return "", errdefs.Optionf(errdefs.BadArgument, "layers.WithCompression", "compression zstd: the base is a Docker schema 2 image, which has no zstd layer type; use compression none or gzip (or an OCI base)")
	case c == CompressionZstd:
		return types.OCILayerZStd, nil
	case docker:
		return types.DockerLayer, nil
	default:
		return types.OCILayer, nil
	}
}

// newWriter returns the pinned compressor writing to w (nil for none).
func (c Compression) newWriter(w io.Writer) (io.WriteCloser, error) {
	switch c {
	case CompressionNone:
		return nil, nil
	case CompressionZstd:
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
	default:
		return gzip.NewWriterLevel(w, compressionLevel)
	}
}

// newReader decompresses r (r itself for none). close releases the
// decompressor (not r).
func (c Compression) newReader(r io.Reader) (rd io.Reader, close func(), err error) {
	switch c {
	case CompressionNone:
		return r, func() {}, nil
	case CompressionZstd:
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	default:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	}
}

// String implements pflag.Value and fmt.Stringer.
func (c Compression) String() string { return string(c) }

// WithCompression sets the compression of the layers Bake and BuildImage
// build. The default is DefaultCompression for Bake and gzip for
// BuildImage (prebake's own image and the tests' base go anywhere).
func WithCompression(c Compression) Option {
	return func(o *options) error {
		o.compression = c
		return nil
	}
}

// checkCompression refuses a value ParseCompression would not return.
func checkCompression(c Compression) error {
	if _, err := ParseCompression(string(c)); err != nil || c == "" {
		return errdefs.Errorf(errdefs.BadArgument, "layer compression %q: want one of none, gzip, zstd, estargz", string(c))
	}
	return nil
}
