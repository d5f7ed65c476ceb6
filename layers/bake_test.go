package layers

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers/registrytest"
	"github.com/prebake/prebake/lock"
)

// testArtifact is a fake resolved jar.
type testArtifact struct {
	coord string // g:a:v
	size  int    // content size; content is derived from the coord
}

func fileName(coord string) string {
	c := parseCoord(coord)
	n := c.group + "_" + c.artifact + "-" + c.version
	if c.classifier != "" {
		n += "-" + c.classifier
	}
	return n + ".jar"
}

func content(coord string, size int) []byte {
	b := make([]byte, size)
	seed := sha256.Sum256([]byte(coord))
	for i := 0; i < size; i += 32 {
		seed = sha256.Sum256(seed[:])
		copy(b[i:], seed[:])
	}
	// Make a third compressible, like the manifests and resources of a jar.
	for i := 0; i < size/3; i++ {
		b[i] = "spark"[i%5]
	}
	return b
}

// makeLock writes the artifacts' files into dir and returns a lock over
// them and their paths, in lock order.
func makeLock(t testing.TB, dir string, arts ...testArtifact) (*lock.File, []string) {
	t.Helper()
	l := &lock.File{Inputs: lock.Inputs{Conflict: "latest"}}
	for _, a := range arts {
		data := content(a.coord, a.size)
		sum := sha256.Sum256(data)
		l.Artifacts = append(l.Artifacts, lock.Artifact{Coord: a.coord, File: fileName(a.coord), Sha256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Repository: "https://repo1.maven.org/maven2/"})
		l.Inputs.Packages = append(l.Inputs.Packages, a.coord)
	}
	l.Normalize()
	var paths []string
	for _, a := range l.Artifacts {
		p := filepath.Join(dir, a.Sha256[:12]+".jar")
		for _, ta := range arts {
			if fileName(ta.coord) == a.File {
				if err := os.WriteFile(p, content(ta.coord, ta.size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		paths = append(paths, p)
	}
	return l, paths
}

var demoArtifacts = []testArtifact{
	{"org.apache.spark:spark-avro_2.12:3.5.0", 40_000},
	{"org.tukaani:xz:1.9", 20_000},
	{"org.apache.commons:commons-lang3:3.14.0", 30_000},
	{"com.fasterxml.jackson.core:jackson-databind:2.15.2", 25_000},
}

func validateImage(t testing.TB, ref string, opts ...Option) {
	t.Helper()
	r, err := parseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadBase(context.Background(), r, testOptions(t, opts...))
	if err != nil {
		t.Fatal(err)
	}
	if b.img != nil {
		if err := validImage(b.img); err != nil {
			t.Fatalf("validate.Image(%s): %v", ref, err)
		}
		return
	}
	if err := validIndex(b.idx); err != nil {
		t.Fatalf("validate.Index(%s): %v", ref, err)
	}
}

// localJars is lock.LocalJars, for tests whose lock variable hides the
// package.
var localJars = lock.LocalJars

func noFetch(t testing.TB) func(context.Context) ([]string, error) {
	return func(context.Context) ([]string, error) {
		t.Error("Fetch called on a cache hit")
		return nil, errors.New("no fetch")
	}
}

func TestBakeLayoutAndCacheHit(t *testing.T) {
	ctx := context.Background()
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	target := "oci:" + filepath.Join(t.TempDir(), "out")
	in := BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: target}
	res, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	if res.CacheHit {
		t.Error("first bake is a cache hit")
	}
	var wantFiles []string
	for _, a := range lf.Artifacts {
		wantFiles = append(wantFiles, a.File)
	}
	if diff := cmp.Diff(wantFiles, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(res.Jars[0], "local:///opt/spark/prebake/jars/") {
		t.Errorf("jars = %v", res.Jars)
	}
	dir, files, err := ReadJars(ctx, res.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if dir != DefaultJarsDir || !cmp.Equal(files, wantFiles) {
		t.Errorf("ReadJars = %q %v", dir, files)
	}
	info, err := Inspect(ctx, res.Tag)
	if err != nil {
		t.Fatal(err)
	}
	if info.LockHash != lf.Hash() || info.Digest != res.Digest || info.Annotations[AnnotationCoords] != strings.Join(lf.Inputs.Packages, ",") {
		t.Errorf("inspect = %+v", info)
	}
	// The layer holds the jars, sorted, with parents, root-owned, at the epoch.
	checkLayer(t, res, lf, paths)

	in.Jars = noFetch(t)
	hit, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !hit.CacheHit || hit.Ref != res.Ref || !cmp.Equal(hit.Files, res.Files) {
		t.Errorf("second bake: hit=%v ref=%s want %s", hit.CacheHit, hit.Ref, res.Ref)
	}
	// The base's Spark version (its spark-core jar), on the bake and, from
	// the annotation, on the cache hit: no base read.
	if res.SparkVersion != "3.5.0" || info.SparkVersion != "3.5.0" || hit.SparkVersion != "3.5.0" {
		t.Errorf("spark version: bake %q, inspect %q, cache hit %q; want 3.5.0", res.SparkVersion, info.SparkVersion, hit.SparkVersion)
	}
}

func checkLayer(t *testing.T, res *Result, lf *lock.File, paths []string) {
	t.Helper()
	r, _ := parseRef(res.Ref)
	b, err := loadBase(context.Background(), r, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := b.img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	top := ls[len(ls)-1]
	if d, _ := top.DiffID(); d.String() != res.Layers[0].DiffID {
		t.Errorf("diffID %s, result says %s", d, res.Layers[0].DiffID)
	}
	rc, err := top.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(DefaultEpoch) || h.Uname != "" {
			t.Errorf("%s: uid %d gid %d mtime %v", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		got = append(got, fmt.Sprintf("%s %o", h.Name, h.Mode))
	}
	want := []string{"opt/ 755", "opt/spark/ 755", "opt/spark/prebake/ 755", "opt/spark/prebake/jars/ 755"}
	for _, a := range lf.Artifacts {
		want = append(want, "opt/spark/prebake/jars/"+a.File+" 644")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
}

// TestBakeReproducible builds twice from copies of the jars in different
// directories, with different file times, at different wall times, and
// compares the digests.
func TestBakeReproducible(t *testing.T) {
	ctx := context.Background()
	base := "oci:" + baseImageDir + ":" + baseImageTag
	var digests []string
	for i := range 2 {
		dir := t.TempDir()
		lf, paths := makeLock(t, dir, demoArtifacts...)
		for _, p := range paths {
			mt := time.Now().Add(time.Duration(i*1000+1) * time.Hour)
			os.Chtimes(p, mt, mt)
			os.Chmod(p, os.FileMode(0o600+i*0o55))
		}
		res, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out")}, WithCacheDir(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, res.Ref)
		digests = append(digests, res.Digest)
		time.Sleep(1100 * time.Millisecond)
	}
	if digests[0] != digests[1] {
		t.Errorf("digests differ: %v", digests)
	}
	// SOURCE_DATE_EPOCH changes the bytes.
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	res, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest == digests[0] {
		t.Error("SOURCE_DATE_EPOCH did not change the digest")
	}
	t.Setenv("SOURCE_DATE_EPOCH", "")
	res, err = Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != digests[0] {
		t.Error("empty SOURCE_DATE_EPOCH is not the default epoch")
	}
}

func TestBakeIndexPlatforms(t *testing.T) {
	ctx := context.Background()
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	out := "oci:" + filepath.Join(t.TempDir(), "out")
	base := "oci:" + baseImageDir + ":" + baseImageTag
	all, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: out})
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, all.Ref)
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, all.Platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	info, err := Inspect(ctx, all.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if info.MediaType != "application/vnd.oci.image.index.v1+json" || info.LockHash != lf.Hash() {
		t.Errorf("index info = %+v", info)
	}
	r, _ := parseRef(all.Ref)
	b, _ := loadBase(ctx, r, testOptions(t))
	im, _ := b.idx.IndexManifest()
	for _, d := range im.Manifests {
		img, _ := b.idx.Image(d.Digest)
		ls, _ := img.Layers()
		top, _ := ls[len(ls)-1].Digest()
		if top.String() != all.Layers[0].Digest {
			t.Errorf("%v: top layer %s, want %s", d.Platform, top, all.Layers[0].Digest)
		}
	}
	one, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: out, Platforms: []string{"linux/arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, one.Ref)
	if one.Tag == all.Tag || !cmp.Equal(one.Platforms, []string{"linux/arm64"}) {
		t.Errorf("arm64 bake: tag %s platforms %v", one.Tag, one.Platforms)
	}
	info, _ = Inspect(ctx, one.Ref)
	if info.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("one platform gave %s", info.MediaType)
	}
	_, err = Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: out, Platforms: []string{"linux/s390x"}})
	if errdefs.KindOf(err) != errdefs.NotFound {
		t.Errorf("missing platform: %v (kind %v)", err, errdefs.KindOf(err))
	}
}

func TestConflictReportAndSkipProvided(t *testing.T) {
	ctx := context.Background()
	lf, paths := makeLock(t, t.TempDir(), append(demoArtifacts,
		testArtifact{"org.apache.spark:spark-connect_2.13:3.5.1", 1000})...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	res, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out"), SkipProvided: true})
	if err != nil {
		t.Fatal(err)
	}
	want := &Report{
		BaseSparkVersion: "3.5.0", BaseScalaBinary: "2.12", BaseJars: len(sparkJars),
		Conflicts: []Conflict{
			{Coord: "com.fasterxml.jackson.core:jackson-databind:2.15.2", File: "com.fasterxml.jackson.core_jackson-databind-2.15.2.jar", Version: "2.15.2", BasePath: "/opt/spark/jars/jackson-databind-2.15.2.jar", BaseVersion: "2.15.2", SameVersion: true, Skipped: true},
			{Coord: "org.apache.commons:commons-lang3:3.14.0", File: "org.apache.commons_commons-lang3-3.14.0.jar", Version: "3.14.0", BasePath: "/opt/spark/jars/commons-lang3-3.12.0.jar", BaseVersion: "3.12.0"},
		},
		Warnings: []Warning{
			{Kind: WarnScalaBinary, Coord: "org.apache.spark:spark-connect_2.13:3.5.1", Message: "org.apache.spark:spark-connect_2.13:3.5.1 is built for Scala 2.13 but the base image has Scala 2.12"},
			{Kind: WarnSparkPatch, Coord: "org.apache.spark:spark-connect_2.13:3.5.1", Message: "org.apache.spark:spark-connect_2.13:3.5.1 is Spark 3.5.1 but the base image has Spark 3.5.0"},
		},
	}
	if diff := cmp.Diff(want, res.Report); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	for _, f := range res.Files {
		if strings.Contains(f, "jackson-databind") {
			t.Errorf("--skip-provided kept %s", f)
		}
	}
	if len(res.Files) != len(lf.Artifacts)-1 || len(res.Jars) != len(res.Files) {
		t.Errorf("files %v", res.Files)
	}
}

func TestSplitJarName(t *testing.T) {
	for _, tc := range []struct{ file, name, version string }{
		{"spark-core_2.12-3.5.0.jar", "spark-core_2.12", "3.5.0"},
		{"log4j-1.2-api-2.20.0.jar", "log4j-1.2-api", "2.20.0"},
		{"zstd-jni-1.5.5-4.jar", "zstd-jni", "1.5.5-4"},
		{"guava-32.1.2-jre.jar", "guava", "32.1.2-jre"},
		{"json4s-core_2.12-3.7.0-M11.jar", "json4s-core_2.12", "3.7.0-M11"},
		{"netty-transport-native-epoll-4.1.96.Final-linux-x86_64.jar", "netty-transport-native-epoll", "4.1.96.Final-linux-x86_64"},
		{"commons-lang3-3.12.0.jar", "commons-lang3", "3.12.0"},
		{"oro-2.0.8.jar", "oro", "2.0.8"},
		{"foo.jar", "foo", ""},
		{"org.apache.commons_commons-lang3-3.14.0.jar", "org.apache.commons_commons-lang3", "3.14.0"},
	} {
		n, v := splitJarName(tc.file)
		if n != tc.name || v != tc.version {
			t.Errorf("splitJarName(%q) = %q %q, want %q %q", tc.file, n, v, tc.name, tc.version)
		}
	}
}

func TestAssignLayers(t *testing.T) {
	var names []string
	var sizes []int64
	for i := range 40 {
		names = append(names, fmt.Sprintf("g_a%02d-1.0.jar", i))
		sizes = append(sizes, 1000)
	}
	sizes[7] = 300 << 20 // aws-java-sdk-bundle
	groups := assignLayers(names, sizes, 8, 64<<20)
	if len(groups) > 8 {
		t.Fatalf("%d layers", len(groups))
	}
	if !cmp.Equal(groups[0], []int{7}) {
		t.Errorf("big jar not alone first: %v", groups[0])
	}
	if !cmp.Equal(groups, assignLayers(names, sizes, 8, 64<<20)) {
		t.Error("assignment not deterministic")
	}
	// Adding a jar changes one group only.
	key := func(gs [][]int, ns []string) map[string]bool {
		m := map[string]bool{}
		for _, g := range gs {
			var s []string
			for _, i := range g {
				s = append(s, ns[i])
			}
			m[strings.Join(s, ",")] = true
		}
		return m
	}
	before := key(groups, names)
	names2 := append(append([]string{}, names...), "g_new-2.0.jar")
	sizes2 := append(append([]int64{}, sizes...), 1000)
	after := key(assignLayers(names2, sizes2, 8, 64<<20), names2)
	changed := 0
	for k := range after {
		if !before[k] {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("adding a jar changed %d layers, want 1", changed)
	}
}

func TestBakeRegistry(t *testing.T) {
	ctx := context.Background()
	host := registrytest.InProcess(t)
	baseRef := host + "/spark:3.5.0"
	if _, err := BuildImage(ctx, sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64", "linux/arm64")); err != nil {
		t.Fatal(err)
	}
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	ct := &countingTransport{base: http.DefaultTransport}
	in := BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: baseRef, Target: host + "/team/spark-jobs"}
	res, err := Bake(ctx, in, WithTransport(ct), WithLayers(3))
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	if !strings.HasPrefix(res.Ref, host+"/team/spark-jobs@sha256:") || !strings.HasPrefix(res.Tag, host+"/team/spark-jobs:prebake-") {
		t.Errorf("ref %s tag %s", res.Ref, res.Tag)
	}
	if len(res.Layers) < 2 {
		t.Errorf("WithLayers(3) gave %d layers", len(res.Layers))
	}
	var layerBytes int64
	for _, l := range res.Layers {
		layerBytes += l.Size
	}
	if res.BytesUploaded < layerBytes || res.BytesUploaded > layerBytes+4096 {
		t.Errorf("uploaded %d bytes, layers are %d", res.BytesUploaded, layerBytes)
	}
	dir, files, err := ReadJars(ctx, res.Ref)
	if err != nil || dir != DefaultJarsDir || len(files) != len(lf.Artifacts) {
		t.Errorf("ReadJars = %q %v %v", dir, files, err)
	}

	// A cache hit: no fetch, no push, at most 3 requests.
	in.Jars = noFetch(t)
	hit, err := Bake(ctx, in, WithLayers(3))
	if err != nil {
		t.Fatal(err)
	}
	if !hit.CacheHit || hit.Ref != res.Ref || hit.Requests > 3 || hit.BytesUploaded != 0 {
		t.Errorf("cache hit: hit=%v ref=%s requests=%d uploaded=%d", hit.CacheHit, hit.Ref, hit.Requests, hit.BytesUploaded)
	}
	if hit.Duration > 100*time.Millisecond {
		t.Logf("cache hit took %v (budget 100ms on loopback)", hit.Duration)
	}

	// An explicit --tag that holds another bake is replaced.
	lock2, paths2 := makeLock(t, t.TempDir(), demoArtifacts[:2]...)
	r2, err := Bake(ctx, BakeInput{Lock: lock2, Jars: lock.LocalJars(paths2), Base: baseRef, Target: host + "/team/spark-jobs:latest"})
	if err != nil {
		t.Fatal(err)
	}
	r3, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: baseRef, Target: host + "/team/spark-jobs", Tag: "latest"}, WithLayers(3))
	if err != nil {
		t.Fatal(err)
	}
	if r3.CacheHit || r3.Digest == r2.Digest || r3.Digest != res.Digest {
		t.Errorf("tag reuse: hit=%v r2=%s r3=%s", r3.CacheHit, r2.Digest, r3.Digest)
	}
}

func TestBakeIncrementalUpload(t *testing.T) {
	ctx := context.Background()
	host := registrytest.InProcess(t)
	baseRef := host + "/spark:3.5.0"
	if _, err := BuildImage(ctx, sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64")); err != nil {
		t.Fatal(err)
	}
	var arts []testArtifact
	for i := range 24 {
		arts = append(arts, testArtifact{fmt.Sprintf("com.example:lib%02d:1.%d", i, i), 20_000})
	}
	lf, paths := makeLock(t, t.TempDir(), arts...)
	first, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: baseRef, Target: host + "/jobs"}, WithLayers(8))
	if err != nil {
		t.Fatal(err)
	}
	lock2, paths2 := makeLock(t, t.TempDir(), append(arts, testArtifact{"com.example:added:2.0", 20_000})...)
	second, err := Bake(ctx, BakeInput{Lock: lock2, Jars: lock.LocalJars(paths2), Base: baseRef, Target: host + "/jobs"}, WithLayers(8))
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, second.Ref)
	var total int64
	for _, l := range second.Layers {
		total += l.Size
	}
	t.Logf("re-bake after adding one jar uploaded %d of %d layer bytes (%d layers)", second.BytesUploaded, total, len(second.Layers))
	if second.BytesUploaded*2 > total || first.BytesUploaded < total*3/4 {
		t.Errorf("first uploaded %d, re-bake uploaded %d of %d", first.BytesUploaded, second.BytesUploaded, total)
	}
}

func TestRegistryErrors(t *testing.T) {
	ctx := context.Background()
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts[:1]...)
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer deny.Close()
	dh := strings.TrimPrefix(deny.URL, "http://")
	host := registrytest.InProcess(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	ch := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	for _, tc := range []struct {
		name, base, target string
		kind               errdefs.Kind
	}{
		{"denied base", dh + "/spark:3.5.0", host + "/x", errdefs.Denied},
		{"missing base", host + "/nope:1", host + "/x", errdefs.NotFound},
		{"missing layout", "oci:/nonexistent/layout:1", host + "/x", errdefs.NotFound},
		{"missing layout tag", "oci:" + baseImageDir + ":9.9.9", host + "/x", errdefs.NotFound},
		{"registry down", ch + "/spark:1", host + "/x", errdefs.Unavailable},
		{"denied target", "oci:" + baseImageDir + ":" + baseImageAmd64Tag, dh + "/x", errdefs.Denied},
		{"bad jars dir", "oci:" + baseImageDir + ":" + baseImageAmd64Tag, host + "/x", errdefs.BadArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: tc.base, Target: tc.target}
			if tc.kind == errdefs.BadArgument {
				in.JarsDir = "relative/jars"
			}
			_, err := Bake(ctx, in, WithBasicAuth("prebake", "s3cret-pw"))
			if got := errdefs.KindOf(err); got != tc.kind {
				t.Fatalf("kind %v, want %v: %v", got, tc.kind, err)
			}
			if strings.Contains(err.Error(), "s3cret-pw") {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}

// TestBaseLayerNotReuploaded checks that a bake into another repository of the
// same registry sends only the new layers.
func TestBaseLayerNotReuploaded(t *testing.T) {
	ctx := context.Background()
	host := registrytest.InProcess(t)
	baseRef := host + "/spark:3.5.0"
	if _, err := BuildImage(ctx, sparkBaseSpec(t, baseRef, sparkJars, "linux/amd64")); err != nil {
		t.Fatal(err)
	}
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	res, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: baseRef, Target: host + "/other"})
	if err != nil {
		t.Fatal(err)
	}
	if res.BytesUploaded > res.Layers[0].Size+4096 {
		t.Errorf("uploaded %d bytes for a %d-byte layer: base layers were re-sent", res.BytesUploaded, res.Layers[0].Size)
	}
	ref, _ := name.ParseReference(res.Ref)
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := validImage(img); err != nil {
		t.Fatal(err)
	}
}

func TestBakeExtraFiles(t *testing.T) {
	ctx := context.Background()
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts[:1]...)
	self := bytesFile("/usr/local/bin/prebake", 0o755, []byte("\x7fELF fake"))
	self.ID = "fake-self-v1"
	in := BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageTag, Target: "oci:" + filepath.Join(t.TempDir(), "out"),
		Extra: []File{self}, ExtraPlatform: "linux/amd64"}
	if _, err := Bake(ctx, in); errdefs.KindOf(err) != errdefs.BadArgument {
		t.Fatalf("extra files on an arm64+amd64 index: kind %v: %v", errdefs.KindOf(err), err)
	}
	in.Platforms = []string{"linux/amd64"}
	res, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	validateImage(t, res.Ref)
	if len(res.Layers) != 2 || !cmp.Equal(res.Layers[1].Files, []string{"/usr/local/bin/prebake"}) {
		t.Errorf("layers %+v", res.Layers)
	}
	in.Extra[0].ID = "fake-self-v2"
	res2, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Tag == res.Tag {
		t.Error("another binary gives the same cache tag")
	}
}

// TestBaseIndexCached checks that each base layer is read once: in memory,
// then from the cache directory in a new process (a fresh index).
func TestBaseIndexCached(t *testing.T) {
	ctx := context.Background()
	r, _ := parseRef("oci:" + baseImageDir + ":" + baseImageAmd64Tag)
	b, err := loadBase(ctx, r, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dirs := []string{SparkJarsDir, DefaultJarsDir}
	x := &jarIndex{mem: map[string]*layerJars{}}
	first, err := baseJars(ctx, b.img, dirs, x, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(sparkJars) || x.scans != 2 {
		t.Fatalf("%d jars, %d layers read", len(first), x.scans)
	}
	if _, err := baseJars(ctx, b.img, dirs, x, dir); err != nil || x.scans != 2 {
		t.Errorf("second read scanned again (%d): %v", x.scans, err)
	}
	fresh := &jarIndex{mem: map[string]*layerJars{}}
	again, err := baseJars(ctx, b.img, dirs, fresh, dir)
	if err != nil || fresh.scans != 0 || !cmp.Equal(first, again) {
		t.Errorf("from the cache dir: scans %d, %v vs %v, %v", fresh.scans, again, first, err)
	}
}

// TestBaseJarsWhiteouts applies whiteouts and opaque directories.
func TestBaseJarsWhiteouts(t *testing.T) {
	x := &jarIndex{mem: map[string]*layerJars{
		"sha256:" + strings.Repeat("1", 64): {Jars: []string{"/opt/spark/jars/a-1.0.jar", "/opt/spark/jars/b-1.0.jar", "/opt/other/c-1.0.jar"}},
		"sha256:" + strings.Repeat("2", 64): {Whiteouts: []string{"/opt/spark/jars/a-1.0.jar"}, Jars: []string{"/opt/spark/jars/a-2.0.jar"}},
		"sha256:" + strings.Repeat("3", 64): {Opaque: []string{"/opt/spark/prebake/jars"}, Jars: []string{"/opt/spark/prebake/jars/d-1.0.jar"}},
	}}
	img := fakeLayersImage{strings.Repeat("1", 64), strings.Repeat("2", 64), strings.Repeat("3", 64)}
	got, err := baseJars(context.Background(), img, []string{SparkJarsDir, DefaultJarsDir}, x, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/spark/jars/a-2.0.jar", "/opt/spark/jars/b-1.0.jar", "/opt/spark/prebake/jars/d-1.0.jar"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// fakeLayersImage is an image whose layers only have digests.
type fakeLayersImage []string

func (f fakeLayersImage) Layers() ([]v1.Layer, error) {
	var ls []v1.Layer
	for _, h := range f {
		ls = append(ls, &builtLayer{digest: v1.Hash{Algorithm: "sha256", Hex: h}})
	}
	return ls, nil
}

type fakeProgress struct {
	mu    sync.Mutex
	tasks map[string]*fakeTask
}

type fakeTask struct {
	total, n int64
	done     bool
	err      error
}

func (p *fakeProgress) Start(name string, total int64) progress.Task {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := &fakeTask{total: total}
	p.tasks[strings.Fields(name)[0]] = t
	return &lockedTask{mu: &p.mu, t: t}
}

type lockedTask struct {
	mu *sync.Mutex
	t  *fakeTask
}

func (l *lockedTask) Add(n int64)    { l.mu.Lock(); l.t.n += n; l.mu.Unlock() }
func (l *lockedTask) Done(err error) { l.mu.Lock(); l.t.done, l.t.err = true, err; l.mu.Unlock() }

func TestBakeProgress(t *testing.T) {
	ctx := context.Background()
	host := registrytest.InProcess(t)
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	p := &fakeProgress{tasks: map[string]*fakeTask{}}
	if _, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: host + "/p"}, WithProgress(p)); err != nil {
		t.Fatal(err)
	}
	l, push := p.tasks["layer"], p.tasks["push"]
	if l == nil || !l.done || l.n < l.total || l.total == 0 {
		t.Errorf("layer task %+v", l)
	}
	if push == nil || !push.done || push.err != nil || push.n == 0 || push.n < push.total {
		t.Errorf("push task %+v", push)
	}
}

// TestBakeGoldenDigest pins the digest of a bake of fixed jars onto the
// committed base, for each compression (one line each: compression, image
// digest, layer digest): a change of compressor, tar layout or annotation
// shows up here (and changes every cache tag: bump the compressor id or the
// key version). -update-base rewrites the golden file.
func TestBakeGoldenDigest(t *testing.T) {
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts...)
	var got strings.Builder
	for _, c := range Compressions {
		res, err := Bake(context.Background(), BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageTag, Target: "oci:" + filepath.Join(t.TempDir(), "out")}, WithCompression(c))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&got, "%s %s %s\n", c, res.Digest, res.Layers[0].Digest)
	}
	golden := filepath.Join("testdata", "bake-digest.golden")
	if *updateBase {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("bake digests (compression image layer), -golden +got:\n%s", diff)
	}
}

// A jar whose bytes are not the lock's (a cache blob replaced by one of the
// same size) never goes into an image: the bake fails with 65.
func TestBakeRefusesModifiedJar(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lf, paths := makeLock(t, dir, demoArtifacts...)
	info, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(paths[0], 0o644)
	if err := os.WriteFile(paths[0], bytes.Repeat([]byte("X"), int(info.Size())), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "out")
	_, err = Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageTag, Target: "oci:" + target}, WithCacheDir(t.TempDir()))
	if !errors.Is(err, lock.ErrCorruptBlob) || errdefs.KindOf(err) != errdefs.Invalid {
		t.Fatalf("bake with a modified jar: err = %v (kind %v), want ErrCorruptBlob and invalid input", err, errdefs.KindOf(err))
	}
	if !strings.Contains(err.Error(), lf.Artifacts[0].File) {
		t.Errorf("error %q does not name the jar %s", err, lf.Artifacts[0].File)
	}
}

// TestBaseLines: the report on synthetic bases of the Spark lines 3.4, 4.1
// and 4.3 (their jars/ as pyspark 3.4.4, 4.1.4 and 4.3.0 ship them, cut
// down): the Spark, Scala and Hadoop versions read from the jars, the Scala
// suffix check on a 2.13-only line, the Hadoop connector check, and no
// report for what fits.
func TestBaseLines(t *testing.T) {
	bases := map[string][]string{
		"3.4": {"avro-1.11.1.jar", "commons-lang3-3.12.0.jar", "guava-14.0.1.jar", "hadoop-client-api-3.3.4.jar", "hadoop-client-runtime-3.3.4.jar",
			"jackson-databind-2.14.2.jar", "scala-collection-compat_2.12-2.7.0.jar", "scala-library-2.12.17.jar", "scala-reflect-2.12.17.jar",
			"spark-core_2.12-3.4.4.jar", "spark-sql_2.12-3.4.4.jar"},
		"4.1": {"avro-1.12.1.jar", "commons-lang3-3.19.0.jar", "guava-33.4.8-jre.jar", "hadoop-client-api-3.4.2.jar", "hadoop-client-runtime-3.4.2.jar",
			"jackson-databind-2.21.2.jar", "scala-library-2.13.17.jar", "scala-parallel-collections_2.13-1.2.0.jar", "scala-reflect-2.13.17.jar",
			"spark-connect_2.13-4.1.4.jar", "spark-core_2.13-4.1.4.jar", "spark-sql_2.13-4.1.4.jar"},
		"4.3": {"avro-1.12.1.jar", "commons-lang3-3.20.0.jar", "guava-33.6.0-jre.jar", "hadoop-client-api-3.5.0.jar", "hadoop-client-runtime-3.5.0.jar",
			"jackson-databind-2.21.2.jar", "scala-library-2.13.18.jar", "scala-parallel-collections_2.13-1.2.0.jar", "scala-reflect-2.13.18.jar",
			"spark-connect_2.13-4.3.0.jar", "spark-core_2.13-4.3.0.jar", "spark-sql_2.13-4.3.0.jar"},
	}
	type want struct {
		spark, scala, hadoop string
		warnings             []string // kind coord
		conflicts            []string // coord base-version
	}
	for _, tc := range []struct {
		name, base string
		coords     []string
		want       want
	}{
		{"3.4 fits", "3.4", []string{"org.apache.spark:spark-sql-kafka-0-10_2.12:3.4.4", "org.apache.hadoop:hadoop-aws:3.3.4"},
			want{"3.4.4", "2.12", "3.3.4", nil, nil}},
		{"3.4 with a 2.13 jar and Hadoop 3.4", "3.4", []string{"org.apache.spark:spark-avro_2.13:3.4.4", "org.apache.hadoop:hadoop-aws:3.4.1"},
			want{"3.4.4", "2.12", "3.3.4", []string{"scala-binary org.apache.spark:spark-avro_2.13:3.4.4", "hadoop-version org.apache.hadoop:hadoop-aws:3.4.1"}, nil}},
		{"4.1 fits", "4.1", []string{"org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.4", "org.apache.hadoop:hadoop-aws:3.4.2", "io.delta:delta-spark_2.13:4.0.0"},
			want{"4.1.4", "2.13", "3.4.2", nil, nil}},
		{"4.1 is 2.13 only", "4.1", []string{"io.delta:delta-spark_2.12:3.3.2", "org.apache.spark:spark-connect_2.13:4.1.4"},
			want{"4.1.4", "2.13", "3.4.2", []string{"scala-binary io.delta:delta-spark_2.12:3.3.2"}, []string{"org.apache.spark:spark-connect_2.13:4.1.4 4.1.4"}}},
		{"4.3 with 4.0's connector and Hadoop", "4.3", []string{"org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0", "org.apache.hadoop:hadoop-aws:3.4.1", "com.google.guava:guava:32.1.3-jre"},
			want{"4.3.0", "2.13", "3.5.0", []string{"spark-version org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0", "hadoop-version org.apache.hadoop:hadoop-aws:3.4.1"},
				[]string{"com.google.guava:guava:32.1.3-jre 33.6.0-jre"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jars, files []string
			for _, j := range bases[tc.base] {
				jars = append(jars, "/opt/spark/jars/"+j)
			}
			for _, c := range tc.coords {
				files = append(files, strings.ReplaceAll(c, ":", "_")+".jar")
			}
			r := CheckJars(tc.coords, files, jars, "/opt/spark/jars")
			got := want{spark: r.BaseSparkVersion, scala: r.BaseScalaBinary, hadoop: r.BaseHadoopVersion}
			for _, w := range r.Warnings {
				got.warnings = append(got.warnings, w.Kind+" "+w.Coord)
			}
			for _, c := range r.Conflicts {
				got.conflicts = append(got.conflicts, c.Coord+" "+c.BaseVersion)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("report (-want +got):\n%s", d)
			}
		})
	}
}

func TestJavaVersion(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/x", "JAVA_VERSION=jdk-17.0.13+11"}, "17.0.13+11"},
		{[]string{"JAVA_VERSION=jdk-21.0.5+11"}, "21.0.5+11"},
		{[]string{"JAVA_HOME=/opt/java"}, ""},
	} {
		if got := javaVersion(tc.env); got != tc.want {
			t.Errorf("javaVersion(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
