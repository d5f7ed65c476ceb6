package pipeline

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

// TestPrepareDriverSparkVersion: a bake reports the Spark version of the
// driver's base as its jars say (the driver-specific image when set), on a
// bake and on a bake-cache hit.
func TestPrepareDriverSparkVersion(t *testing.T) {
	ctx := context.Background()
	root, _ := filepath.Abs("..")
	base35 := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0-amd64"
	base40 := "oci:" + filepath.Join(t.TempDir(), "base40") + ":prod"
	var jars []layers.File
	for _, j := range []string{"scala-library-2.13.14.jar", "spark-core_2.13-4.0.1.jar"} {
		var buf bytes.Buffer
		if err := zip.NewWriter(&buf).Close(); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		jars = append(jars, layers.File{Name: "/opt/spark/jars/" + j, Mode: 0o644, Size: int64(len(data)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }})
	}
	if _, err := layers.BuildImage(ctx, layers.BuildSpec{Target: base40, Platforms: []layers.PlatformFiles{{Platform: "linux/amd64", Layers: [][]layers.File{jars}}}}); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	req := resolver.Request{NoDefaultRepositories: true, Repositories: []string{"file://" + filepath.Join(root, "testdata", "demo-repo") + "/"}, CacheDir: cache}
	target := "oci:" + filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		name       string
		main       string
		driver     string
		want       string
		driverBake string // what the driver's base got: baked or cache hit
	}{
		{"3.5 base", base35, "", "3.5.0", "baked"},
		{"3.5 base, cache hit", base35, "", "3.5.0", "cache hit"},
		{"driver image 4.0", base35, base40, "4.0.1", "baked"},
		{"non-official tag, cache hit", base40, "", "4.0.1", "cache hit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster", "--packages", "ch.qos.logback:logback-classic:1.4.11"}
			args = append(args, "--conf", "spark.kubernetes.container.image="+tc.main)
			driverBase := tc.main
			if tc.driver != "" {
				args = append(args, "--conf", "spark.kubernetes.driver.container.image="+tc.driver)
				driverBase = tc.driver
			}
			sub, err := submit.LoadSubmission(append(args, "--class", "Main", "local:///opt/app.jar"), nil)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep, err := progress.New(&out, progress.Normal)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Prepare(ctx, sub, Options{Request: req, CacheDir: cache, Target: &ImageTarget{Repo: target}, Reporter: rep})
			if err != nil {
				t.Fatal(err)
			}
			if want := ": " + tc.driverBake + " (base " + driverBase + ")"; !strings.Contains(out.String(), want) {
				t.Errorf("no %q in:\n%s", want, out.String())
			}
			if diff := cmp.Diff(tc.want, r.DriverSparkVersion); diff != "" {
				t.Errorf("DriverSparkVersion (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrepareSharedLock: Prepare's image bake puts the jars of
// ImageTarget.Shared in a shared layer (the image records the set's hash).
func TestPrepareSharedLock(t *testing.T) {
	ctx := context.Background()
	root, _ := filepath.Abs("..")
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0-amd64"
	cache := t.TempDir()
	req := resolver.Request{NoDefaultRepositories: true, Repositories: []string{"file://" + filepath.Join(root, "testdata", "demo-repo") + "/"}, CacheDir: cache}
	const pkg = "ch.qos.logback:logback-classic:1.4.11"
	lreq := req
	lreq.Packages = []string{pkg}
	res, err := resolver.Resolve(ctx, lreq)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lock.Artifacts) < 2 {
		t.Fatalf("want a lock of 2 jars or more, got %d", len(res.Lock.Artifacts))
	}
	shared := &lock.File{Artifacts: res.Lock.Artifacts[1:]}
	shared.Normalize()
	sub, err := submit.LoadSubmission([]string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster", "--packages", pkg,
		"--conf", "spark.kubernetes.container.image=" + base, "--class", "Main", "local:///opt/app.jar"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := progress.New(&out, progress.Normal)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Prepare(ctx, sub, Options{Request: req, CacheDir: cache, Target: &ImageTarget{Repo: "oci:" + filepath.Join(t.TempDir(), "out"), Shared: shared}, Reporter: rep})
	if err != nil {
		t.Fatal(err)
	}
	var image string
	for _, a := range r.Args {
		if v, ok := strings.CutPrefix(a, "spark.kubernetes.container.image="); ok {
			image = v
		}
	}
	info, err := layers.Inspect(ctx, image)
	if err != nil {
		t.Fatalf("inspect %q: %v (args %v)", image, err, r.Args)
	}
	if got := info.Annotations[layers.AnnotationShared]; got != shared.Hash() {
		t.Errorf("%s = %q, want %s", layers.AnnotationShared, got, shared.Hash())
	}
}
