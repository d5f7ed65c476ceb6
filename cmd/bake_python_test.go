package cmd

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
)

// pythonBase writes an amd64 image to an OCI layout under dir and returns
// its reference: with python (true) /usr/bin/python3 -> python3.11 and a
// glibc 2.36 libc.so.6 (Debian 12's layout), else only the libc.
func pythonBase(t *testing.T, dir string, python bool) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	libc := []byte("\x7fELF\x00GNU C Library (Debian GLIBC 2.36-9+deb12u4) stable release version 2.36.\n")
	files := []struct {
		name, link string
		data       []byte
	}{{name: "usr/lib/x86_64-linux-gnu/libc.so.6", data: libc}}
	if python {
		files = append(files, struct {
			name, link string
			data       []byte
		}{name: "usr/bin/python3", link: "python3.11"}, struct {
			name, link string
			data       []byte
		}{name: "usr/bin/python3.11", data: []byte("\x7fELF")})
	}
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: 0o755, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if f.link != "" {
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, f.link, 0
		}
		must(t, tw.WriteHeader(h))
		_, err := tw.Write(f.data)
		must(t, err)
	}
	must(t, tw.Close())
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	must(t, err)
	img, err := mutate.AppendLayers(empty.Image, l)
	must(t, err)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "amd64",
		Config: v1.Config{Env: []string{"PATH=/usr/bin:/bin"}}, RootFS: v1.RootFS{Type: "layers", DiffIDs: mustDiffIDs(t, l)}})
	must(t, err)
	p, err := layout.Write(dir, empty.Index)
	must(t, err)
	must(t, p.AppendImage(img))
	return layers.OCIPrefix + dir
}

// pyBakeFixture is pyFixture (its index, pip's configuration) with two
// installable wheels, one pure and one manylinux, and a hashed
// requirements file of them.
func pyBakeFixture(t *testing.T) (ix *sitepkgstest.Index, reqs, dir string) {
	ix, _, dir = pyFixture(t)
	reqs = filepath.Join(dir, "bake-requirements.txt")
	addWheelPair(t, ix, reqs, pureWheel{"tinypure", "1.0", "py3-none-any", "P = 1\n"}, "tinynative", "2.0")
	return ix, reqs, dir
}

func mustDiffIDs(t *testing.T, ls ...v1.Layer) []v1.Hash {
	t.Helper()
	var out []v1.Hash
	for _, l := range ls {
		d, err := l.DiffID()
		must(t, err)
		out = append(out, d)
	}
	return out
}

// TestBakeImagePython: bake image --py-requirements reads the wheels'
// target from the base (python3.11, glibc 2.36, amd64), writes ONE lock
// with both halves and installs the wheels into the image (its
// dev.prebake.python annotation, PYTHONPATH); the lock alone bakes the
// same (a cache hit, its target from the lock), fetches missing wheels
// from the index, and offline without them is 69; a base without python3
// is 64 naming the image and both flags, which then do without it.
func TestBakeImagePython(t *testing.T) {
	ix, reqs, dir := pyBakeFixture(t)
	base := pythonBase(t, filepath.Join(dir, "base"), true)
	target := layers.OCIPrefix + filepath.Join(dir, "out")
	cache, lockPath := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
	args := []string{"bake", "image", "--base", base, "--target", target, "--cache", cache, "--lock", lockPath, "--no-default-repositories"}

	out, stderr, code := runCLI(t, append(args, "--py-requirements", reqs)...)
	if code != 0 {
		t.Fatalf("bake image --py-requirements: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "python 3.11, manylinux_2_36_x86_64 (target from image "+base+")") || !strings.Contains(stderr, "2 wheel(s) in "+layers.DefaultPythonDir) {
		t.Errorf("stderr does not report the target read from the image and the wheels:\n%s", stderr)
	}
	lf, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if lf.Version != lock.SchemaVersionKinds || len(lf.Wheels()) != 2 || lf.Inputs.Python == nil || lf.Inputs.Python.Version != "3.11" || lf.Inputs.Python.Platforms[0] != "manylinux_2_36_x86_64" {
		t.Fatalf("lock: %+v python %+v", lf, lf.Inputs.Python)
	}
	ref := strings.SplitN(out, "\n", 2)[0]
	info, err := layers.Inspect(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	var pa layers.PythonAnnotation
	if info.LockHash != lf.Hash() || json.Unmarshal([]byte(info.Annotations[layers.AnnotationPython]), &pa) != nil ||
		pa.Dir != layers.DefaultPythonDir || !slices.Equal(pa.Files, []string{"tinynative-2.0-cp311-cp311-manylinux_2_17_x86_64.whl", "tinypure-1.0-py3-none-any.whl"}) {
		t.Errorf("image %s: lock %s (want %s), %s=%q", ref, info.LockHash, lf.Hash(), layers.AnnotationPython, info.Annotations[layers.AnnotationPython])
	}

	// The lock alone: a cache hit, no index request, -o json.
	ix.Requests.Store(0)
	out, stderr, code = runCLI(t, append(args, "-o", "json", "--frozen")...)
	var js jsondoc.BakeImage
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil {
		t.Fatalf("bake image --lock: exit %d\n%s\n%s", code, out, stderr)
	}
	if !js.CacheHit || js.Ref != ref || js.Python == nil || js.Python.TargetFrom != "lock" || js.Python.Platform != "manylinux_2_36_x86_64" ||
		js.Python.Dir != layers.DefaultPythonDir || len(js.Python.Wheels) != 2 || ix.Requests.Load() != 0 {
		t.Errorf("bake image --lock -o json: %+v python %+v, %d index requests", js.Result, js.Python, ix.Requests.Load())
	}

	// Another tag from an empty cache: the jars none, the wheels fetched
	// by their digests; offline, 69.
	if _, stderr, code := runCLI(t, "bake", "image", "--base", base, "--target", target, "--tag", "again", "--lock", lockPath, "--cache", filepath.Join(dir, "cache2"), "--offline"); code != exitcode.Unavailable || !strings.Contains(stderr, "offline") {
		t.Errorf("offline, wheels not cached: exit %d, want 69\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "bake", "image", "--base", base, "--target", target, "--tag", "again", "--lock", lockPath, "--cache", filepath.Join(dir, "cache2")); code != 0 {
		t.Errorf("lock alone, wheels fetched again: exit %d\n%s", code, stderr)
	}

	// A base without python3: 64 naming the image and the flags.
	nopy := pythonBase(t, filepath.Join(dir, "nopy"), false)
	noArgs := []string{"bake", "image", "--base", nopy, "--target", target, "--cache", cache, "--lock", filepath.Join(dir, "nopy.lock"), "--no-default-repositories", "--py-requirements", reqs}
	_, stderr, code = runCLI(t, noArgs...)
	if code != exitcode.Usage || !strings.Contains(stderr, nopy) || !strings.Contains(stderr, "--python-version and --python-platform") || !strings.Contains(stderr, "no python3") {
		t.Errorf("base without python3: exit %d, want 64 naming the image and both flags\n%s", code, stderr)
	}
	// ... which then do without it; one alone is 64.
	if _, stderr, code := runCLI(t, append(noArgs, "--python-version", "3.11", "--python-platform", "manylinux_2_36_x86_64")...); code != 0 || !strings.Contains(stderr, "target from flags") {
		t.Errorf("base without python3, the target given: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, append(noArgs, "--python-version", "3.11")...); code != exitcode.Usage || !strings.Contains(stderr, "go together") {
		t.Errorf("--python-version alone: exit %d, want 64\n%s", code, stderr)
	}
}

// TestBakeS3Python: bake s3 --py-requirements uploads one site-packages
// archive and prints its settings after spark.jars; the target comes from
// the flags (bake s3 has no image), else from --lock, else 64 naming the
// flags; the lock alone is a hit with the archive in -o json.
func TestBakeS3Python(t *testing.T) {
	ix, reqs, dir := pyBakeFixture(t)
	store := "file://" + filepath.Join(dir, "store")
	cache, lockPath := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
	args := []string{"bake", "s3", "--store", store, "--cache", cache, "--lock", lockPath, "--no-default-repositories", "--py-requirements", reqs}

	if _, stderr, code := runCLI(t, args...); code != exitcode.Usage || !strings.Contains(stderr, "--python-version") || !strings.Contains(stderr, "--python-platform") {
		t.Errorf("no target, no lock: exit %d, want 64 naming both flags\n%s", code, stderr)
	}
	out, stderr, code := runCLI(t, append(args, "--python-version", "3.11", "--python-platform", "manylinux_2_36_x86_64")...)
	if code != 0 {
		t.Fatalf("bake s3 --py-requirements: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || lines[0] != "" || !strings.HasPrefix(lines[1], "spark.archives=file://") || !strings.HasSuffix(lines[1], "#pydeps") ||
		lines[2] != "spark.executorEnv.PYTHONPATH=./pydeps" {
		t.Fatalf("stdout:\n%s", out)
	}
	archive := strings.TrimSuffix(strings.TrimPrefix(lines[1], "spark.archives=file://"), "#pydeps")
	if _, err := os.Stat(archive); err != nil {
		t.Errorf("archive: %v", err)
	}
	lf, err := lock.Read(lockPath)
	if err != nil || len(lf.Wheels()) != 2 {
		t.Fatalf("lock: %v %+v", err, lf)
	}

	// The target from the lock: the same set, no index request.
	ix.Requests.Store(0)
	if _, stderr, code := runCLI(t, args...); code != 0 || !strings.Contains(stderr, "target from lock") || ix.Requests.Load() != 0 {
		t.Errorf("target from --lock: exit %d, %d index requests\n%s", code, ix.Requests.Load(), stderr)
	}
	// The lock alone, as JSON.
	out, stderr, code = runCLI(t, "bake", "s3", "--store", store, "--cache", cache, "--lock", lockPath, "-o", "json")
	var js bakeS3JSON
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil {
		t.Fatalf("bake s3 --lock: exit %d\n%s\n%s", code, out, stderr)
	}
	if !js.Hit || js.LockHash != lf.Hash() || js.Python == nil || js.Python.Archive != "file://"+archive || js.Python.TargetFrom != "lock" ||
		len(js.Python.Wheels) != 2 || js.PythonConf["spark.archives"] != "file://"+archive+"#pydeps" {
		t.Errorf("bake s3 --lock -o json: %+v python %+v", js, js.Python)
	}
}

// TestWarmPython: a set with a Python half warms its archive too (its
// lock written beside the sets file), a second run is a hit, a set of a
// lock with wheels alone bakes them; a python key without requirements
// is 65 naming the set.
func TestWarmPython(t *testing.T) {
	_, reqs, dir := pyBakeFixture(t)
	store := "file://" + filepath.Join(dir, "store")
	sets := filepath.Join(dir, "sets.yaml")
	must(t, os.WriteFile(sets, []byte("sets:\n  - name: py\n    lock: py.lock\n    python:\n      requirements: "+filepath.Base(reqs)+"\n      version: \"3.11\"\n      platform: manylinux_2_36_x86_64\n"), 0o644))
	args := []string{"warm", "-f", sets, "--store", store, "--cache", filepath.Join(dir, "cache"), "--no-default-repositories", "-o", "json"}
	out, stderr, code := runCLI(t, args...)
	var js jsondoc.WarmOutput
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || len(js.Sets) != 1 || js.Sets[0].Wheels != 2 || js.Sets[0].Hit {
		t.Fatalf("warm: exit %d %+v\n%s\n%s", code, js, out, stderr)
	}
	lf, err := lock.Read(filepath.Join(dir, "py.lock"))
	if err != nil || len(lf.Wheels()) != 2 || lf.Hash() != js.Sets[0].LockHash {
		t.Fatalf("py.lock: %v %+v", err, lf)
	}
	archives, _ := filepath.Glob(filepath.Join(dir, "store", "archives", "sha256", "*", "site-packages.tar.gz"))
	if len(archives) != 1 {
		t.Errorf("archives in the store: %v", archives)
	}
	if out, stderr, code := runCLI(t, args...); code != 0 || !strings.Contains(out, `"hit":true`) {
		t.Errorf("second warm: exit %d\n%s\n%s", code, out, stderr)
	}
	// The lock alone (no python key): the same set, a hit.
	must(t, os.WriteFile(sets, []byte("sets:\n  - name: py\n    lock: py.lock\n"), 0o644))
	if out, stderr, code := runCLI(t, args...); code != 0 || !strings.Contains(out, `"hit":true`) || !strings.Contains(out, lf.Hash()) {
		t.Errorf("warm of the lock alone: exit %d\n%s\n%s", code, out, stderr)
	}
	must(t, os.WriteFile(sets, []byte("sets:\n  - name: bad\n    packages: [\"a:b:1\"]\n    python:\n      version: \"3.11\"\n"), 0o644))
	if _, stderr, code := runCLI(t, args...); code != exitcode.DataErr || !strings.Contains(stderr, `set "bad"`) {
		t.Errorf("python without requirements: exit %d, want 65\n%s", code, stderr)
	}
}
