package layers

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/lock"
)

// pullCounter counts the response bytes of a node's pulls.
type pullCounter struct {
	rt    http.RoundTripper
	bytes atomic.Int64
}

func (c *pullCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet {
		resp.Body = countBody{resp.Body, &c.bytes}
	}
	return resp, err
}

type countBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// node is a node's image store: an OCI layout that keeps the blobs of the
// images it pulled (a blob it has is not fetched again, as containerd's
// content store).
type node struct {
	t      *testing.T
	layout layout.Path
}

func newNode(t *testing.T) *node {
	p, err := layout.Write(filepath.Join(t.TempDir(), "node"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	return &node{t: t, layout: p}
}

// pull pulls ref and returns what it needs (the manifest and the blobs
// the node lacks: count and bytes, from the manifest) and the response
// bytes it read.
func (n *node) pull(ref string) (need, blobs, read int64) {
	n.t.Helper()
	c := &pullCounter{rt: http.DefaultTransport}
	r, err := name.ParseReference(ref)
	if err != nil {
		n.t.Fatal(err)
	}
	img, err := remote.Image(r, remote.WithTransport(c))
	if err != nil {
		n.t.Fatal(err)
	}
	raw, err := img.RawManifest()
	if err != nil {
		n.t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		n.t.Fatal(err)
	}
	need = int64(len(raw))
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		if rc, err := n.layout.Blob(d.Digest); err == nil {
			rc.Close()
			continue
		}
		need += d.Size
		blobs++
	}
	if err := n.layout.AppendImage(img); err != nil {
		n.t.Fatal(err)
	}
	return need, blobs, c.bytes.Load()
}

// TestITSharedLayerPull measures, on the distribution registry, the bytes
// a node that ran job A pulls to run job B (two locks sharing a platform
// set, jar sizes as on Central: platformArtifacts, jobAArtifacts,
// jobBArtifacts) for the single-layer bake and for --shared-lock: with the
// shared layer it fetches B's per-job layer, config and manifest only.
func TestITSharedLayerPull(t *testing.T) {
	reg := startRegistry(t, false)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	dir := t.TempDir()
	platform, _ := makeLock(t, t.TempDir(), platformArtifacts...)
	lockA, pathsA := makeLock(t, dir, concatArtifacts(platformArtifacts, jobAArtifacts)...)
	lockB, pathsB := makeLock(t, dir, concatArtifacts(platformArtifacts, jobBArtifacts)...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	type run struct{ firstBytes, secondBytes, secondBlobs, secondRead, jobBLayer int64 }
	measure := func(repo string, shared *lock.File) run {
		t.Helper()
		bake := func(l *lock.File, paths []string) *Result {
			r, err := Bake(ctx, BakeInput{Lock: l, Jars: lock.LocalJars(paths), Base: base, Target: reg.Repo("") + repo, Shared: shared})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		a, b := bake(lockA, pathsA), bake(lockB, pathsB)
		n := newNode(t)
		first, _, _ := n.pull(a.Ref)
		second, blobs, read := n.pull(b.Ref)
		return run{first, second, blobs, read, b.Layers[len(b.Layers)-1].Size}
	}
	single := measure("single", nil)
	split := measure("shared", platform)
	var platformBytes, jobB int64
	for _, a := range platform.Artifacts {
		platformBytes += a.Size
	}
	for _, a := range lockB.Artifacts {
		jobB += a.Size
	}
	t.Logf("second job's pull on a node that ran the first: single layer %d bytes (%d blobs), shared + per-job layers %d bytes (%d blobs): %.1f%% of the single-layer pull (response bytes read: %d and %d); first pulls %d and %d bytes; job B's jars %d bytes, of which the platform set's %d",
		single.secondBytes, single.secondBlobs, split.secondBytes, split.secondBlobs, 100*float64(split.secondBytes)/float64(single.secondBytes), single.secondRead, split.secondRead, single.firstBytes, split.firstBytes, jobB, platformBytes)
	if single.secondBytes < jobB {
		t.Errorf("single-layer second pull %d bytes, less than job B's jars (%d)", single.secondBytes, jobB)
	}
	// The shared bake's second pull: job B's own layer, its config and manifest (a few KiB).
	if split.secondBytes < split.jobBLayer || split.secondBytes > split.jobBLayer+64<<10 {
		t.Errorf("shared second pull %d bytes, want job B's per-job layer (%d) plus config and manifest", split.secondBytes, split.jobBLayer)
	}
	if split.secondRead > split.secondBytes+64<<10 {
		t.Errorf("shared second pull read %d response bytes, want about %d", split.secondRead, split.secondBytes)
	}
	if split.secondBlobs != 2 {
		t.Errorf("shared second pull fetched %d blobs, want 2 (per-job layer and config)", split.secondBlobs)
	}
}
