package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/layers/registrytest"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/s3store/s3test"
)

// TestITBakePythonSparkImage: bake image --py-requirements (one pure and
// one manylinux wheel) onto the real node's Spark image (Debian 12,
// python3.11) in the real registry reads the target from the image,
// writes one lock of both halves, and the image carries the lock hash,
// the python annotation and PYTHONPATH; bake s3 of that lock against
// versitygw uploads the site-packages archive once.
func TestITBakePythonSparkImage(t *testing.T) {
	testenv.RequireIT(t)
	layout := filepath.Join(testenv.CacheDir(), "spark-images-current", "spark-3.5.9")
	if _, err := os.Stat(filepath.Join(layout, "index.json")); err != nil {
		testenv.Skip(t, "the Spark image is not built (hack/infra.sh builds it): "+err.Error())
	}
	// The servers first: pyBakeFixture leaves no PATH or CI cache to find them.
	reg := registrytest.Start(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket(t, "py-bake")
	ctx := context.Background()
	base := reg.Repo("spark:3.5.9")
	if _, err := layers.BuildImage(ctx, layers.BuildSpec{Base: layers.OCIPrefix + layout + ":spark-3.5.9", Target: base, Platforms: []layers.PlatformFiles{{Platform: "linux/amd64"}}}); err != nil {
		t.Fatal(err)
	}
	_, reqs, dir := pyBakeFixture(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	cache, lockPath := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
	demo, err := filepath.Abs(filepath.Join("..", "testdata", "demo-repo"))
	must(t, err)
	args := []string{"bake", "image", "--base", base, "--target", reg.Repo("team/pyjobs"), "--cache", cache, "--lock", lockPath,
		"--no-default-repositories", "--repositories", "file://" + demo + "/", "--packages", "org.slf4j:slf4j-api:2.0.7", "--py-requirements", reqs}
	start := time.Now()
	out, stderr, code := runCLI(t, append(args, "-o", "json")...)
	took := time.Since(start)
	var js jsondoc.BakeImage
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil {
		t.Fatalf("bake image: exit %d\n%s\n%s", code, out, stderr)
	}
	if js.CacheHit || js.Python == nil || js.Python.TargetFrom != "image "+base || js.Python.Version != "3.11" || js.Python.Platform != "manylinux_2_36_x86_64" || len(js.Python.Wheels) != 2 {
		t.Errorf("bake image -o json: python %+v\n%s", js.Python, stderr)
	}
	lf, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(lf.Jars()) != 1 || len(lf.Wheels()) != 2 || lf.Inputs.Python.Platforms[0] != "manylinux_2_36_x86_64" || js.LockHash != lf.Hash() {
		t.Errorf("lock: %d jars, %d wheels, python %+v, hash %s (image says %s)", len(lf.Jars()), len(lf.Wheels()), lf.Inputs.Python, lf.Hash(), js.LockHash)
	}
	info, err := layers.Inspect(ctx, js.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var pa layers.PythonAnnotation
	if info.LockHash != lf.Hash() || json.Unmarshal([]byte(info.Annotations[layers.AnnotationPython]), &pa) != nil ||
		!slices.Equal(pa.Files, []string{"tinynative-2.0-cp311-cp311-manylinux_2_17_x86_64.whl", "tinypure-1.0-py3-none-any.whl"}) || info.SparkVersion != "3.5.9" {
		t.Errorf("image %s: lock %s, spark %s, %s=%q", js.Ref, info.LockHash, info.SparkVersion, layers.AnnotationPython, info.Annotations[layers.AnnotationPython])
	}
	// A second bake: a cache hit, the target read from the layer cache.
	start = time.Now()
	out, stderr, code = runCLI(t, append(args, "-o", "json")...)
	hit := time.Since(start)
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || !js.CacheHit {
		t.Errorf("second bake: exit %d, cacheHit %t\n%s", code, js.CacheHit, stderr)
	}
	t.Logf("bake image with 1 jar and 2 wheels onto %s: %s; again (cache hit): %s", base, took.Round(time.Millisecond), hit.Round(time.Millisecond))

	// bake s3 of that lock against versitygw: the archive sent once.
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	s3args := []string{"bake", "s3", "--store", "s3://" + bucket + "/p", "--endpoint", srv.Endpoint, "--path-style", "--cache", cache, "--lock", lockPath, "-o", "json"}
	start = time.Now()
	out, stderr, code = runCLI(t, s3args...)
	s3took := time.Since(start)
	var sj bakeS3JSON
	if code != 0 || json.Unmarshal([]byte(out), &sj) != nil {
		t.Fatalf("bake s3: exit %d\n%s\n%s", code, out, stderr)
	}
	if sj.Hit || sj.LockHash != lf.Hash() || sj.Python == nil || !strings.HasPrefix(sj.Python.Archive, "s3a://"+bucket+"/p/archives/sha256/") ||
		sj.PythonConf["spark.archives"] != sj.Python.Archive+"#pydeps" || sj.PythonConf["spark.kubernetes.driverEnv.PYTHONPATH"] != "./pydeps" {
		t.Errorf("bake s3 -o json: %+v python %+v", sj, sj.Python)
	}
	out, stderr, code = runCLI(t, s3args...)
	if code != 0 || json.Unmarshal([]byte(out), &sj) != nil || !sj.Hit || sj.BytesSent != 0 {
		t.Errorf("second bake s3: exit %d %+v\n%s", code, sj, stderr)
	}
	t.Logf("bake s3 of the lock into versitygw: %s", s3took.Round(time.Millisecond))
}
