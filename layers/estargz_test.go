package layers

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/containerd/stargz-snapshotter/estargz"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/types"
	digest "github.com/opencontainers/go-digest"

	"github.com/prebake/prebake/lock"
)

// TestBakeEstargz: --compression estargz bakes a layer that the estargz
// reader opens (footer, TOC whose digest is the descriptor's annotation,
// every jar readable by its chunks and verified), under the plain gzip
// media type (any runtime pulls it), with the uncompressed-size
// annotation; the same inputs give the same digest twice, with and
// without the layer cache.
func TestBakeEstargz(t *testing.T) {
	ctx := context.Background()
	arts := append([]testArtifact{{"org.example:big:1.0", estargzChunk*2 + 12345}}, demoArtifacts...) // a jar of 3 chunks
	lf, paths := makeLock(t, t.TempDir(), arts...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	cache := t.TempDir()
	var digests []string
	var res *Result
	for i, opts := range [][]Option{nil, {WithCacheDir(cache)}, {WithCacheDir(cache)}} {
		r, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out")}, append(opts, WithCompression(CompressionEstargz))...)
		if err != nil {
			t.Fatalf("bake %d: %v", i, err)
		}
		validateImage(t, r.Ref)
		digests = append(digests, r.Digest)
		res = r
	}
	if digests[0] != digests[1] || digests[1] != digests[2] {
		t.Fatalf("estargz digests %v: not reproducible", digests)
	}
	if res.Compression != CompressionEstargz {
		t.Errorf("result compression %q", res.Compression)
	}
	r, _ := parseRef(res.Ref)
	b, err := loadBase(ctx, r, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := b.img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	desc := m.Layers[len(m.Layers)-1]
	if desc.MediaType != types.OCILayer {
		t.Errorf("layer media type %s, want %s", desc.MediaType, types.OCILayer)
	}
	tocAnn := desc.Annotations[AnnotationTOCDigest]
	if tocAnn == "" {
		t.Fatalf("layer descriptor has no %s annotation: %v", AnnotationTOCDigest, desc.Annotations)
	}
	ls, _ := b.img.Layers()
	rc, err := ls[len(ls)-1].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	blob, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := stdgzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if got := desc.Annotations[AnnotationUncompressedSize]; got != strconv.Itoa(len(plain)) {
		t.Errorf("%s = %s, the layer decompresses to %d bytes", AnnotationUncompressedSize, got, len(plain))
	}
	er, err := estargz.Open(io.NewSectionReader(bytes.NewReader(blob), 0, int64(len(blob))))
	if err != nil {
		t.Fatalf("estargz.Open: %v", err)
	}
	if er.TOCDigest().String() != tocAnn {
		t.Errorf("TOC digest %s, annotation %s", er.TOCDigest(), tocAnn)
	}
	v, err := er.VerifyTOC(digest.Digest(tocAnn))
	if err != nil {
		t.Fatalf("VerifyTOC: %v", err)
	}
	var chunks int
	for i, a := range lf.Artifacts {
		name := DefaultJarsDir[1:] + "/" + a.File
		e, ok := er.Lookup(name)
		if !ok {
			t.Fatalf("TOC has no %s", name)
		}
		sr, err := er.OpenFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < e.Size; {
			c, ok := er.ChunkEntryForOffset(name, off)
			if !ok {
				t.Fatalf("%s: no chunk at %d", name, off)
			}
			size := c.ChunkSize
			if size == 0 {
				size = e.Size - c.ChunkOffset
			}
			cv, err := v.Verifier(c)
			if err != nil {
				t.Fatalf("%s chunk %d: %v", name, c.ChunkOffset, err)
			}
			if _, err := io.Copy(cv, io.NewSectionReader(sr, c.ChunkOffset, size)); err != nil || !cv.Verified() {
				t.Errorf("%s chunk at %d: not verified (%v)", name, c.ChunkOffset, err)
			}
			off += size
			chunks++
		}
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(sr, 0, sr.Size())); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(paths[i])
		if got := hex.EncodeToString(h.Sum(nil)); got != a.Sha256 || int64(len(want)) != a.Size {
			t.Errorf("%s read back from the TOC: sha256 %s, want %s", name, got, a.Sha256)
		}
	}
	if want := len(lf.Artifacts) + 2; chunks != want {
		t.Errorf("%d chunks, want %d (the big jar in 3)", chunks, want)
	}
	if diff := cmp.Diff(lf.Artifacts[0].File, res.Files[0]); diff != "" {
		t.Errorf("files: %s", diff)
	}
}
