package layers

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// compressionOf is the compression a layer media type names.
func compressionOf(mt types.MediaType) (Compression, bool) {
	switch mt {
	case types.OCILayer, types.DockerLayer:
		return CompressionGzip, true
	case types.OCILayerZStd:
		return CompressionZstd, true
	case types.OCIUncompressedLayer, types.DockerUncompressedLayer:
		return CompressionNone, true
	}
	return "", false
}

// validImage is validate.Image, whose layer check assumes gzip: the
// layers are checked here instead, by their media type (digest and size of
// the blob, diffID of the decompressed tar, a tar that reads to the end).
func validImage(img v1.Image) error {
	if err := validate.Image(img, validate.Fast); err != nil {
		return err
	}
	ls, err := img.Layers()
	if err != nil {
		return err
	}
	for i, l := range ls {
		if err := validLayer(l); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return nil
}

func validLayer(l v1.Layer) error {
	mt, err := l.MediaType()
	if err != nil {
		return err
	}
	comp, ok := compressionOf(mt)
	if !ok {
		return fmt.Errorf("media type %s", mt)
	}
	digest, _ := l.Digest()
	diffID, _ := l.DiffID()
	size, _ := l.Size()
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	bh, uh, cw := sha256.New(), sha256.New(), &countWriter{}
	zr, zclose, err := comp.newReader(io.TeeReader(rc, io.MultiWriter(bh, cw)))
	if err != nil {
		return fmt.Errorf("%s: %w", mt, err)
	}
	defer zclose()
	tr := tar.NewReader(io.TeeReader(zr, uh))
	for {
		if _, err := tr.Next(); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: tar: %w", mt, err)
		}
	}
	if _, err := io.Copy(io.Discard, io.TeeReader(zr, uh)); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return err
	}
	if got := sumHash(bh); got != digest || cw.n != size {
		return fmt.Errorf("%s: blob %s (%d bytes), descriptor %s (%d bytes)", mt, got, cw.n, digest, size)
	}
	if got := sumHash(uh); got != diffID {
		return fmt.Errorf("%s: diffID %s, config %s", mt, got, diffID)
	}
	return nil
}

// validIndex validates an index and every image in it.
func validIndex(idx v1.ImageIndex) error {
	if err := validate.Index(idx, validate.Fast); err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		if err := validImage(img); err != nil {
			return fmt.Errorf("%s: %w", d.Digest, err)
		}
	}
	return nil
}
