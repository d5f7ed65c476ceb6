package layers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

// TestLayerBlobCache checks that a bake compresses each layer once into a
// content-addressed blob in the cache, that the next bake (another target)
// reuses the blob without building, that the OCI layout gets the same bytes,
// that a damaged cached blob fails the bake and is removed, and that the
// bake after that builds it again.
func TestLayerBlobCache(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	bake := func(opts ...Option) (*Result, *fakeProgress, string, error) {
		p := &fakeProgress{tasks: map[string]*fakeTask{}}
		out := filepath.Join(t.TempDir(), "out")
		res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: base, Target: "oci:" + out}, append(opts, WithCacheDir(cache), WithProgress(p))...)
		return res, p, out, err
	}
	first, p, out1, err := bake()
	if err != nil {
		t.Fatal(err)
	}
	if p.tasks["layer"] == nil {
		t.Fatal("first bake built no layer")
	}
	d, err := v1.NewHash(first.Layers[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	blob := blobPath(filepath.Join(cache, "layers"), d)
	st, err := os.Stat(blob)
	if err != nil || st.Size() != first.Layers[0].Size {
		t.Fatalf("cached blob %s: %v, %v (want %v bytes)", blob, st, err, first.Layers[0].Size)
	}
	want, _ := os.ReadFile(blob)
	if got, err := os.ReadFile(blobPath(out1, d)); err != nil || string(got) != string(want) {
		t.Fatalf("layout blob differs from the cached blob (%v)", err)
	}
	validateImage(t, first.Ref)

	second, p, out2, err := bake()
	if err != nil {
		t.Fatal(err)
	}
	if p.tasks["layer"] != nil {
		t.Error("second bake built the layer again")
	}
	if second.Digest != first.Digest {
		t.Errorf("second bake %s, first %s", second.Digest, first.Digest)
	}
	if got, err := os.ReadFile(blobPath(out2, d)); err != nil || string(got) != string(want) {
		t.Fatalf("second layout blob differs from the cached blob (%v)", err)
	}
	validateImage(t, second.Ref)

	// Damage the cached blob, keeping its size.
	bad := append([]byte(nil), want...)
	bad[len(bad)/2] ^= 0xff
	os.Remove(blob) // the layouts may share its inode
	if err := os.WriteFile(blob, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := bake(); errdefs.KindOf(err) != errdefs.Invalid {
		t.Fatalf("bake with a damaged cached blob: %v, want kind %v", err, errdefs.Invalid)
	}
	if _, err := os.Stat(blob); !os.IsNotExist(err) {
		t.Fatalf("damaged blob not removed: %v", err)
	}
	third, p, _, err := bake()
	if err != nil {
		t.Fatal(err)
	}
	if p.tasks["layer"] == nil || third.Digest != first.Digest {
		t.Errorf("bake after the damage: built %v, digest %s, want %s", p.tasks["layer"] != nil, third.Digest, first.Digest)
	}
	if got, _ := os.ReadFile(blob); string(got) != string(want) {
		t.Error("rebuilt blob differs")
	}
}

// TestLayerBlobTemp checks that without a cache the blobs go to a temporary
// directory that the bake removes, for a layout and for a push.
func TestLayerBlobTemp(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	host := registrytest.InProcess(t)
	for _, target := range []string{"oci:" + filepath.Join(t.TempDir(), "out"), host + "/tmpblobs"} {
		res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: base, Target: target})
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, res.Ref)
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%s: left %d entries in TMPDIR (%s)", target, len(left), left[0].Name())
		}
	}
}
