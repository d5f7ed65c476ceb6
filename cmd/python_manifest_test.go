package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/layers"
)

// manifestPyFixture is an index of one pure wheel (tinypure) with pip's
// configuration pointing at it, its hashed requirements file, and the
// demo Maven repository's flags.
func manifestPyFixture(t *testing.T) (reqs, dir string, repo []string) {
	t.Helper()
	ix := sitepkgstest.NewIndex()
	t.Cleanup(ix.Close)
	whl := sitepkgstest.Wheel(t, "tinypure", "1.0", sitepkgstest.File{Name: "tinypure/__init__.py", Body: "P = 1\n"})
	ix.Add("tinypure", "tinypure-1.0-py3-none-any.whl", whl)
	dir = pipEnv(t, ix.URL+"/simple/")
	sum := sha256.Sum256(whl)
	reqs = filepath.Join(dir, "requirements.txt")
	must(t, os.WriteFile(reqs, []byte("tinypure==1.0 --hash=sha256:"+hex.EncodeToString(sum[:])+"\n"), 0o644))
	repo = []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(repoRoot(t), "testdata/demo-repo") + "/"}
	return reqs, dir, repo
}

// pyManifest is a PySpark SparkApplication with the user's own archive
// and PYTHONPATHs (the driver's in sparkConf, the executors' in env), a
// main application file on this host that pip-installs, and image.
const pyManifest = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: pydeps
spec:
  type: Python
  mode: cluster
  image: IMAGE
  mainApplicationFile: JOB # a local path: checked for installs
  sparkVersion: 3.5.0
  deps:
    packages:
      - org.slf4j:slf4j-api:2.0.7
    archives:
      - s3a://team/env.tar.gz#env
  sparkConf:
    spark.kubernetes.driverEnv.PYTHONPATH: /opt/team
  driver:
    cores: 1
  executor:
    instances: 1
    env:
      - name: PYTHONPATH
        value: /opt/exec
`

// writePyManifest writes pyManifest (image, and job.py beside it that
// installs a package at run time) into dir and returns its path.
func writePyManifest(t *testing.T, dir, image string) string {
	t.Helper()
	job := filepath.Join(dir, "job.py")
	must(t, os.WriteFile(job, []byte("import subprocess\n\nsubprocess.run(['pip', 'install', 'requests'])\n"), 0o644))
	app := filepath.Join(dir, "app.yaml")
	must(t, os.WriteFile(app, []byte(strings.NewReplacer("IMAGE", image, "JOB", job).Replace(pyManifest)), 0o644))
	return app
}

// checkManifestGolden compares the rewritten manifest and the warnings
// (normalized by norm) with cmd/testdata/python_ship/name.golden.
func checkManifestGolden(t *testing.T, name, yaml, stderr string, norm func(string) string) {
	t.Helper()
	checkShipGolden(t, name, []string{yaml + "--- warnings:", strings.TrimSuffix(warningLines(stderr), "\n")}, norm)
}

// TestRewriteManifestPythonStore: rewrite --manifest --store ships the
// wheels of a set baked with bake s3: the archive is appended to
// spec.deps.archives and ./pydeps to the driver's and executors'
// PYTHONPATH where the user sets them, each with a warning; the target
// is read from the manifest's spec.image; the local main application
// file's pip install is warned about (file:line).
func TestRewriteManifestPythonStore(t *testing.T) {
	reqs, dir, repo := manifestPyFixture(t)
	t.Chdir(dir)
	base := pythonBase(t, filepath.Join(dir, "base"), true)
	storeDir := filepath.Join(dir, "store")
	store := "file://" + storeDir
	common := append([]string{"--store", store, "--cache", filepath.Join(dir, "cache"), "--lock", filepath.Join(dir, "prebake.lock")}, repo...)
	if _, stderr, code := runCLI(t, append(append([]string{"bake", "s3", "--packages", "org.slf4j:slf4j-api:2.0.7"}, common...), pyShipFlags(reqs)...)...); code != 0 {
		t.Fatalf("bake s3: exit %d\n%s", code, stderr)
	}
	app := writePyManifest(t, dir, base)
	out, stderr, code := runCLI(t, append(append([]string{"rewrite", "--manifest", app, "--frozen"}, common...), "--py-requirements", reqs)...)
	if code != 0 {
		t.Fatalf("rewrite --manifest: exit %d\n%s", code, stderr)
	}
	if want := "python 3.11, manylinux_2_36_x86_64 (target from image " + base + ")"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	checkManifestGolden(t, "manifest-store", out, stderr, shipNormalizer(storeDir, "$STORE", base, "$BASE", dir, "$DIR"))
	if m, _ := filepath.Glob(filepath.Join(storeDir, "archives", "sha256", "*", "site-packages.tar.gz")); len(m) != 1 {
		t.Errorf("store archives: %v, want one", m)
	}

	// Without a target anywhere (no image, no flags, no lock): 64 naming
	// the document and the flags.
	bare := filepath.Join(dir, "bare.yaml")
	must(t, os.WriteFile(bare, []byte(strings.Replace(pyManifest, "  image: IMAGE\n", "", 1)), 0o644))
	_, stderr, code = runCLI(t, append([]string{"rewrite", "--manifest", bare, "--store", store, "--cache", filepath.Join(dir, "cache"), "--py-requirements", reqs}, repo...)...)
	if code != exitcode.Usage || !strings.Contains(stderr, "document 1 (SparkApplication pydeps) names no image") || !strings.Contains(stderr, "--python-version") {
		t.Errorf("no target: exit %d, want 64 naming the document and --python-version\n%s", code, stderr)
	}
	// Without a store or image: the operator's cluster mode cannot ship
	// the wheels (64).
	_, stderr, code = runCLI(t, append(append([]string{"rewrite", "--manifest", app, "--cache", filepath.Join(dir, "cache"), "--lock", filepath.Join(dir, "prebake.lock"), "--frozen"}, repo...), pyShipFlags(reqs)...)...)
	if code != exitcode.Usage || !strings.Contains(stderr, "cluster mode") {
		t.Errorf("no cluster target: exit %d, want 64\n%s", code, stderr)
	}
}

// TestRewriteManifestPythonImage: rewrite --manifest --image-from an
// image baked with the wheels (bake image) sets the image, which holds
// them on its PYTHONPATH, and warns that the user's PYTHONPATHs replace
// it; an image whose dev.prebake.python lacks a wheel of the lock is 66.
func TestRewriteManifestPythonImage(t *testing.T) {
	reqs, dir, repo := manifestPyFixture(t)
	t.Chdir(dir)
	base := pythonBase(t, filepath.Join(dir, "base"), true)
	cache := filepath.Join(dir, "cache")
	bake := func(target, lockPath string, extra ...string) string {
		t.Helper()
		out, stderr, code := runCLI(t, append(append([]string{"bake", "image", "--base", base, "--target", target, "--cache", cache, "--lock", lockPath, "--packages", "org.slf4j:slf4j-api:2.0.7"}, repo...), extra...)...)
		if code != 0 {
			t.Fatalf("bake image: exit %d\n%s", code, stderr)
		}
		return strings.SplitN(out, "\n", 2)[0]
	}
	lockPath := filepath.Join(dir, "prebake.lock")
	ref := bake(layers.OCIPrefix+filepath.Join(dir, "out"), lockPath, "--py-requirements", reqs)
	app := writePyManifest(t, dir, "apache/spark:3.5.0")
	out, stderr, code := runCLI(t, append([]string{"rewrite", "--manifest", app, "--image-from", ref, "--cache", cache, "--lock", lockPath, "--frozen", "--py-requirements", reqs}, repo...)...)
	if code != 0 {
		t.Fatalf("rewrite --manifest --image-from: exit %d\n%s", code, stderr)
	}
	if want := "(target from image " + ref + ")"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	checkManifestGolden(t, "manifest-image", out, stderr, shipNormalizer(ref, "$IMAGE", dir, "$DIR"))

	// An image baked without the wheels does not hold the set: 66.
	jarsOnly := bake(layers.OCIPrefix+filepath.Join(dir, "jars-only"), filepath.Join(dir, "jars.lock"))
	_, stderr, code = runCLI(t, append(append([]string{"rewrite", "--manifest", app, "--image-from", jarsOnly, "--cache", cache, "--lock", lockPath, "--frozen"}, repo...), pyShipFlags(reqs)...)...)
	if code != exitcode.NotFound || !strings.Contains(stderr, "has no wheel") {
		t.Errorf("image without the wheels: exit %d, want 66\n%s", code, stderr)
	}
}

// TestRewriteManifestPythonJSON: -o json reports the Python half's
// changes with the document.
func TestRewriteManifestPythonJSON(t *testing.T) {
	reqs, dir, repo := manifestPyFixture(t)
	t.Chdir(dir)
	store := "file://" + filepath.Join(dir, "store")
	common := append([]string{"--store", store, "--cache", filepath.Join(dir, "cache"), "--lock", filepath.Join(dir, "prebake.lock")}, repo...)
	if _, stderr, code := runCLI(t, append(append([]string{"bake", "s3"}, common...), pyShipFlags(reqs)...)...); code != 0 {
		t.Fatalf("bake s3: exit %d\n%s", code, stderr)
	}
	// No packages at all: the Python half alone, into empty deps.
	app := filepath.Join(dir, "py-only.yaml")
	must(t, os.WriteFile(app, []byte("apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n  name: py-only\nspec:\n  type: Python\n  mainApplicationFile: local:///opt/app/main.py\n"), 0o644))
	out, stderr, code := runCLI(t, append(append([]string{"rewrite", "-o", "json", "--manifest", app}, common...), pyShipFlags(reqs)...)...)
	if code != 0 {
		t.Fatalf("rewrite -o json --manifest: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`"target":"spec.deps.archives"`, `"target":"spec.sparkConf.spark.executorEnv.PYTHONPATH"`, `"target":"spec.sparkConf.spark.kubernetes.driverEnv.PYTHONPATH"`, `"rewritten":true`} {
		if !strings.Contains(out, want) {
			t.Errorf("-o json lacks %s:\n%s", want, out)
		}
	}
	if diff := cmp.Diff("", strings.TrimSpace(warningLines(stderr))); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// warningLines are stderr's prebake: warning lines.
func warningLines(stderr string) string {
	var b strings.Builder
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "prebake: warning: ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
