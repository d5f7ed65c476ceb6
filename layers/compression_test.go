package layers

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

func TestParseCompression(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Compression
		kind errdefs.Kind
	}{
		{"", DefaultCompression, 0},
		{"none", CompressionNone, 0},
		{"GZIP", CompressionGzip, 0},
		{"zstd", CompressionZstd, 0},
		{"eStargz", CompressionEstargz, 0},
		{"xz", "", errdefs.BadArgument},
		{"gzip,zstd", "", errdefs.BadArgument},
	} {
		got, err := ParseCompression(tc.in)
		if got != tc.want || errdefs.KindOf(err) != tc.kind {
			t.Errorf("ParseCompression(%q) = %q, %v (kind %v); want %q, kind %v", tc.in, got, err, errdefs.KindOf(err), tc.want, tc.kind)
		}
	}
}

// layerMediaTypes returns the media types of the layers ref's image adds to
// the base's n layers.
func addedLayers(t *testing.T, ref string, n int) []v1.Layer {
	t.Helper()
	ls, err := testImage(t, ref).Layers()
	if err != nil {
		t.Fatal(err)
	}
	return ls[n:]
}

// Each compression gives its OCI media type, a valid image whose layer
// holds the jars, and the same digest whether the layer is built fresh,
// built into a layer cache, or taken from it.
func TestBakeCompressions(t *testing.T) {
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	nBase := len(addedLayers(t, base, 0))
	wantMT := map[Compression]types.MediaType{
		CompressionNone: "application/vnd.oci.image.layer.v1.tar",
		CompressionGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
		CompressionZstd: "application/vnd.oci.image.layer.v1.tar+zstd",
		// eStargz is a gzip layer that also holds its TOC (TestBakeEstargz)
		CompressionEstargz: "application/vnd.oci.image.layer.v1.tar+gzip",
	}
	digests := map[string]Compression{}
	for _, c := range Compressions {
		t.Run(string(c), func(t *testing.T) {
			cache := t.TempDir()
			var ds []string
			for i, opts := range [][]Option{{WithCompression(c)}, {WithCompression(c), WithCacheDir(cache)}, {WithCompression(c), WithCacheDir(cache)}} {
				res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out")}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				validateImage(t, res.Ref)
				if res.Compression != c {
					t.Errorf("Result.Compression = %q, want %q", res.Compression, c)
				}
				ds = append(ds, res.Digest)
				if i > 0 {
					continue
				}
				added := addedLayers(t, res.Ref, nBase)
				if len(added) != 1 {
					t.Fatalf("%d layers added", len(added))
				}
				mt, _ := added[0].MediaType()
				if mt != wantMT[c] {
					t.Errorf("media type %s, want %s", mt, wantMT[c])
				}
				if d, _ := added[0].Digest(); c == CompressionNone && d.String() != res.Layers[0].DiffID {
					t.Errorf("uncompressed layer: digest %s != diffID %s", d, res.Layers[0].DiffID)
				}
				rc, err := added[0].Uncompressed()
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				tr := tar.NewReader(rc)
				for {
					h, err := tr.Next()
					if err == io.EOF {
						break
					} else if err != nil {
						t.Fatal(err)
					}
					if h.Typeflag == tar.TypeReg && !(c == CompressionEstargz && h.Name == "stargz.index.json") {
						names = append(names, filepath.Base(h.Name))
					}
				}
				rc.Close()
				if diff := cmp.Diff(res.Files, names); diff != "" {
					t.Errorf("layer files (-result +layer):\n%s", diff)
				}
			}
			if ds[0] != ds[1] || ds[1] != ds[2] {
				t.Errorf("digests fresh, cached, from the cache: %v", ds)
			}
			if prev, ok := digests[ds[0]]; ok {
				t.Errorf("%s and %s give the same digest", prev, c)
			}
			digests[ds[0]] = c
		})
	}
}

// A Docker schema 2 base gets Docker layer types: the uncompressed one for
// none; zstd has none and is refused (64) before anything is built.
func TestBakeCompressionDockerBase(t *testing.T) {
	ctx := context.Background()
	host := registrytest.InProcess(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(host + "/docker-base:1")
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: ref.String(), Target: host + "/jobs"}, WithCompression(CompressionNone))
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	added := addedLayers(t, res.Ref, 1)
	if mt, _ := added[0].MediaType(); mt != types.DockerUncompressedLayer {
		t.Errorf("none on a Docker base: media type %s", mt)
	}
	_, err = Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: ref.String(), Target: host + "/jobs-zstd"}, WithCompression(CompressionZstd))
	if errdefs.KindOf(err) != errdefs.BadArgument {
		t.Errorf("zstd on a Docker base: %v (kind %v), want bad argument", err, errdefs.KindOf(err))
	}
}

// A jar read from the cache (its path is the cache blob of its sha256) is
// read once: trusted by its stamp, hashed otherwise; modified, the bake
// fails with 65 whichever way.
func TestBakeCacheBlobs(t *testing.T) {
	ctx := context.Background()
	for _, stamp := range []bool{false, true} {
		cache := t.TempDir()
		lock, srcs := makeLock(t, t.TempDir(), demoArtifacts...)
		var paths []string
		for i, a := range lock.Artifacts {
			p := blobcache.BlobPath(cache, a.Sha256)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Rename(srcs[i], p); err != nil {
				t.Fatal(err)
			}
			if stamp {
				if err := blobcache.VerifyBlob(cache, a.Sha256, a.Size); err != nil {
					t.Fatal(err)
				}
			}
			paths = append(paths, p)
		}
		in := BakeInput{Lock: lock, Jars: localJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: "oci:" + filepath.Join(t.TempDir(), "out")}
		res, err := Bake(ctx, in, WithCacheDir(cache), WithJarOpener(blobcache.JarOpener(cache)))
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, res.Ref)
		info, _ := os.Stat(paths[1])
		f, err := os.OpenFile(paths[1], os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("EVIL"), 100)
		f.Close()
		os.Chtimes(paths[1], info.ModTime(), info.ModTime())
		os.RemoveAll(filepath.Join(cache, "layers")) // build the layer again
		in.Target = "oci:" + filepath.Join(t.TempDir(), "out")
		_, err = Bake(ctx, in, WithCacheDir(cache), WithJarOpener(blobcache.JarOpener(cache)))
		if !errors.Is(err, blobcache.ErrCorruptBlob) || errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("stamped=%v: modified cache blob: %v (kind %v), want ErrCorruptBlob, invalid input", stamp, err, errdefs.KindOf(err))
		}
	}
}

// Against the real distribution registry: each compression pushes, the
// registry accepts its media type, the image reads back valid (blobs served
// as pushed, diffIDs of the decompressed tars), and a re-bake is a cache
// hit.
func TestITBakeCompressions(t *testing.T) {
	reg, baseRef := registryWithBase(t)
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	seen := map[string]bool{}
	for _, c := range Compressions {
		in := BakeInput{Lock: lock, Jars: localJars(paths), Base: baseRef, Target: reg.Repo("team/jobs")}
		res, err := Bake(ctx, in, WithCompression(c))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		validateImage(t, res.Ref)
		if seen[res.Tag] {
			t.Errorf("%s: tag %s already used by another compression", c, res.Tag)
		}
		seen[res.Tag] = true
		r, _ := parseRef(res.Ref)
		b, err := loadBase(ctx, r, testOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		im, _ := b.idx.IndexManifest()
		img, _ := b.idx.Image(im.Manifests[0].Digest)
		m, _ := img.Manifest()
		last := m.Layers[len(m.Layers)-1]
		if want, _ := c.mediaType(false); last.MediaType != want {
			t.Errorf("%s: registry serves the layer as %s, want %s", c, last.MediaType, want)
		}
		in.Jars = noFetch(t)
		if hit, err := Bake(ctx, in, WithCompression(c)); err != nil || !hit.CacheHit || hit.Digest != res.Digest {
			t.Errorf("%s: re-bake: %+v %v", c, hit, err)
		}
	}
}
