package layers

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

// itPass is the password of the registries started with auth (user
// registrytest.User).
const itPass = "s3cret-it"

// startRegistry is the real registry (the run's shared one; with auth a
// private one that requires basic auth as registrytest.User with itPass).
func startRegistry(t testing.TB, auth bool) *registrytest.Registry {
	t.Helper()
	if auth {
		return registrytest.Start(t, registrytest.WithPassword(itPass))
	}
	return registrytest.Start(t)
}

// dockerConfig writes a Docker config with credentials for host and points
// DOCKER_CONFIG at it.
func dockerConfig(t *testing.T, host, user, pass string) {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	data := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// registryWithBase starts docker-registry and builds the two-platform
// Spark base into it (no Docker credentials): it returns the registry and
// the base's reference.
func registryWithBase(t *testing.T) (*registrytest.Registry, string) {
	t.Helper()
	reg := startRegistry(t, false)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	baseRef := reg.Repo("spark:3.5.0")
	if _, err := BuildImage(context.Background(), sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64", "linux/arm64")); err != nil {
		t.Fatal(err)
	}
	return reg, baseRef
}

func TestITBakeDistribution(t *testing.T) {
	// The base comes from the OCI layout into the registry (a cross-"registry"
	// copy), then a bake into another repository mounts its layers.
	reg, baseRef := registryWithBase(t)
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	in := BakeInput{Lock: lock, Jars: localJars(paths), Base: baseRef, Target: reg.Repo("team/jobs")}
	res, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	if res.BytesUploaded > res.Layers[0].Size+8192 {
		t.Errorf("uploaded %d bytes for a %d-byte layer: base layers were not mounted", res.BytesUploaded, res.Layers[0].Size)
	}
	info, err := Inspect(ctx, res.Ref)
	if err != nil || info.LockHash != lock.Hash() || len(info.Platforms) != 2 {
		t.Fatalf("inspect: %+v %v", info, err)
	}
	in.Jars = noFetch(t)
	hit, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cache hit: %d registry requests, %v", hit.Requests, hit.Duration)
	if !hit.CacheHit || hit.Ref != res.Ref || hit.Requests > 3 || hit.BytesUploaded != 0 {
		t.Errorf("cache hit: hit=%v requests=%d uploaded=%d", hit.CacheHit, hit.Requests, hit.BytesUploaded)
	}
	// ≤ 100 ms on loopback (best of 3: the CI machine is shared).
	fastest := hit.Duration
	for range 2 {
		h, err := Bake(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, h.Duration)
	}
	if fastest > 100*time.Millisecond {
		t.Errorf("cache hit took %v, budget 100ms", fastest)
	}
	// From the layout straight into the registry: the blobs must cross.
	res2, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: reg.Repo("from-layout")})
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res2.Ref)
	_, err = Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: reg.Repo("missing:1"), Target: reg.Repo("x")})
	if errdefs.KindOf(err) != errdefs.NotFound {
		t.Errorf("missing base: kind %v: %v", errdefs.KindOf(err), err)
	}
}

func TestITAuth(t *testing.T) {
	reg := startRegistry(t, true)
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	layoutBase := "oci:" + baseImageDir + ":" + baseImageAmd64Tag

	t.Run("docker config", func(t *testing.T) {
		dockerConfig(t, reg.Host, registrytest.User, itPass)
		res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: layoutBase, Target: reg.Repo("via-config")})
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, res.Ref)
		// The pushed image is a base for the next bake (pull with auth).
		res2, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: res.Ref, Target: reg.Repo("via-config"), JarsDir: "/opt/extra"})
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, res2.Ref)
	})
	t.Run("registry-auth", func(t *testing.T) {
		t.Setenv("DOCKER_CONFIG", t.TempDir())
		res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: layoutBase, Target: reg.Repo("via-flag")}, WithBasicAuth(registrytest.User, itPass))
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, res.Ref, WithBasicAuth(registrytest.User, itPass))
		if _, _, err := ReadJars(ctx, res.Ref, WithBasicAuth(registrytest.User, itPass)); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name string
		opts []Option
		cfg  string
	}{
		{"wrong password flag", []Option{WithBasicAuth(registrytest.User, "wrong-pw-123")}, ""},
		{"wrong password config", nil, "wrong-pw-123"},
		{"no credentials", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg != "" {
				dockerConfig(t, reg.Host, registrytest.User, tc.cfg)
			} else {
				t.Setenv("DOCKER_CONFIG", t.TempDir())
			}
			_, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: layoutBase, Target: reg.Repo("denied")}, tc.opts...)
			if errdefs.KindOf(err) != errdefs.Denied {
				t.Fatalf("kind %v, want permission denied: %v", errdefs.KindOf(err), err)
			}
			if strings.Contains(err.Error(), "wrong-pw-123") || strings.Contains(err.Error(), itPass) {
				t.Errorf("error leaks a password: %v", err)
			}
		})
	}
}

// killOnUpload kills the registry when the first blob upload starts.
type killOnUpload struct {
	base http.RoundTripper
	once sync.Once
	reg  *registrytest.Registry
}

func (k *killOnUpload) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch || (r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads")) {
		k.once.Do(k.reg.Stop)
	}
	return k.base.RoundTrip(r)
}

func TestITRegistryStopsMidPush(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Private()) // stopped and restarted
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), testArtifact{"com.example:big:1.0", 8 << 20}, testArtifact{"com.example:small:1.0", 1000})
	in := BakeInput{Lock: lock, Jars: localJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageTag, Target: reg.Repo("jobs")}
	cache := WithCacheDir(t.TempDir())
	_, err := Bake(ctx, in, cache, WithTransport(&killOnUpload{base: http.DefaultTransport, reg: reg}))
	if errdefs.KindOf(err) != errdefs.Unavailable {
		t.Fatalf("registry stopped: kind %v, want unavailable: %v", errdefs.KindOf(err), err)
	}
	if !strings.Contains(err.Error(), "pushing "+reg.Repo("jobs")) {
		t.Errorf("error does not say what failed: %v", err)
	}
	t.Logf("error: %v", err)
	reg.Restart()
	res, err := Bake(ctx, in, cache)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	validateImage(t, res.Ref)
}

// mountRefuser is a proxy in front of the registry that refuses (403) or
// ignores cross-repository mounts.
func mountRefuser(t *testing.T, upstream string, deny bool) string {
	t.Helper()
	u, _ := url.Parse("http://" + upstream)
	rp := httputil.NewSingleHostReverseProxy(u)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Get("mount") != "" {
			if deny {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, `{"errors":[{"code":"DENIED","message":"mounts are disabled"}]}`)
				return
			}
			r.URL.RawQuery = ""
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

func TestITMountRefused(t *testing.T) {
	reg := startRegistry(t, false)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	for _, deny := range []bool{false, true} {
		t.Run(fmt.Sprintf("deny=%v", deny), func(t *testing.T) {
			// The refuser's host and the test's repository prefix.
			host := mountRefuser(t, reg.Host, deny) + strings.TrimPrefix(reg.Repo(""), reg.Host)
			baseRef := host + fmt.Sprintf("/spark-%v:3.5.0", deny)
			if _, err := BuildImage(ctx, sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64")); err != nil {
				t.Fatal(err)
			}
			res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: baseRef, Target: host + fmt.Sprintf("/jobs-%v", deny)})
			if err != nil {
				t.Fatal(err)
			}
			validateImage(t, res.Ref)
			if res.BytesUploaded <= res.Layers[0].Size {
				t.Errorf("uploaded %d bytes: the base layers should have been uploaded after the refused mount", res.BytesUploaded)
			}
		})
	}
}

// TestITDockerMediaTypes bakes onto a Docker schema 2 base.
func TestITDockerMediaTypes(t *testing.T) {
	reg := startRegistry(t, false)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(reg.Repo("docker-base:1"))
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: ref.String(), Target: reg.Repo("docker-jobs")})
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	info, err := Inspect(ctx, res.Ref)
	if err != nil || info.MediaType != string(types.DockerManifestSchema2) || info.LockHash != lock.Hash() {
		t.Fatalf("inspect: %+v %v", info, err)
	}
	if res.Report.BaseJars != 0 || len(res.Report.Conflicts) != 0 {
		t.Errorf("report on a base without Spark: %+v", res.Report)
	}
}

// TestITCrossRegistry bakes a base of one registry into another: the base
// layers stream across (they cannot be mounted), once; a rerun sends nothing.
func TestITCrossRegistry(t *testing.T) {
	a, b := startRegistry(t, false), registrytest.Start(t, registrytest.Private()) // two hosts
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	baseRef := a.Repo("spark:3.5.0")
	built, err := BuildImage(ctx, sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64"))
	if err != nil {
		t.Fatal(err)
	}
	var baseBytes int64
	for _, l := range built.Images[0].Layers {
		baseBytes += l.Size
	}
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	in := BakeInput{Lock: lock, Jars: localJars(paths), Base: baseRef, Target: b.Repo("jobs")}
	res, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	if want := baseBytes + res.Layers[0].Size; res.BytesUploaded < want || res.BytesUploaded > want+16384 {
		t.Errorf("uploaded %d bytes, want base %d + layer %d (+config)", res.BytesUploaded, baseBytes, res.Layers[0].Size)
	}
	res2, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: baseRef, Target: b.Repo("jobs"), Tag: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if res2.BytesUploaded != 0 || res2.Digest != res.Digest {
		t.Errorf("rerun under another tag uploaded %d bytes (digest %s vs %s)", res2.BytesUploaded, res2.Digest, res.Digest)
	}
}

// TestITAuthScoped: --registry-auth goes to the target registry only; the
// base's registry (other credentials) keeps the Docker config.
func TestITAuthScoped(t *testing.T) {
	a, b := registrytest.Start(t, registrytest.WithPassword("base-pw-1")), registrytest.Start(t, registrytest.WithPassword("target-pw-2"))
	ctx := context.Background()
	dockerConfig(t, a.Host, registrytest.User, "base-pw-1")
	baseRef := a.Repo("spark:3.5.0")
	if _, err := BuildImage(ctx, sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64")); err != nil {
		t.Fatal(err)
	}
	lock, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	res, err := Bake(ctx, BakeInput{Lock: lock, Jars: localJars(paths), Base: baseRef, Target: b.Repo("jobs")}, WithBasicAuth(registrytest.User, "target-pw-2"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := Inspect(ctx, res.Ref, WithBasicAuth(registrytest.User, "target-pw-2"))
	if err != nil || info.LockHash != lock.Hash() {
		t.Fatalf("inspect: %+v %v", info, err)
	}
}
