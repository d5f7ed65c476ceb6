package pypi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/wheel"
)

func TestUVPlatform(t *testing.T) {
	for _, tc := range []struct {
		target wheel.Target
		want   string
	}{
		{wheel.Target{Platform: "x86_64", Glibc: "2.36"}, "x86_64-manylinux_2_36"},
		{wheel.Target{Platform: "amd64", Glibc: "2.41"}, "x86_64-manylinux_2_40"},
		{wheel.Target{Platform: "arm64", Glibc: "2.31"}, "aarch64-manylinux_2_31"},
		{wheel.Target{Platform: "x86_64", Glibc: "2.24"}, "x86_64-manylinux_2_17"},
		{wheel.Target{Platform: "aarch64", Musl: "1.2"}, "aarch64-unknown-linux-musl"},
		{wheel.Target{Platform: "x86_64", Glibc: "2.12"}, ""},
		{wheel.Target{Platform: "s390x", Glibc: "2.36"}, ""},
		{wheel.Target{Platform: "x86_64"}, ""},
	} {
		got, err := Target{Target: tc.target}.UVPlatform()
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("%+v: %q, %v; want %q", tc.target, got, err, tc.want)
		}
		if err != nil && !errors.Is(err, errdefs.BadArgument) {
			t.Errorf("%+v: error %v is not BadArgument", tc.target, err)
		}
	}
}

func TestFindUV(t *testing.T) {
	dir := t.TempDir()
	uv := writeFile(t, dir, "uv", "#!/bin/sh\n")
	os.Chmod(uv, 0o755)
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	if got, err := FindUV(env(map[string]string{"PATH": "/nonexistent:" + dir})); got != uv || err != nil {
		t.Errorf("on PATH: %q, %v", got, err)
	}
	if _, err := FindUV(env(map[string]string{"PREBAKE_UV": dir + "/nothere", "PATH": dir})); !errors.Is(err, errdefs.BadArgument) {
		t.Errorf("a PREBAKE_UV that is no file: %v", err)
	}
	os.MkdirAll(dir+"/ci/uv-"+UVVersion+"/bin", 0o755)
	os.Link(uv, dir+"/ci/uv-"+UVVersion+"/bin/uv")
	if got, err := FindUV(env(map[string]string{"PREBAKE_CI_CACHE": dir + "/ci"})); got != dir+"/ci/uv-"+UVVersion+"/bin/uv" || err != nil {
		t.Errorf("in the CI cache: %q, %v", got, err)
	}
	if _, err := FindUV(env(map[string]string{"PREBAKE_CI_CACHE": dir + "/none"})); !errors.Is(err, ErrNoUV) {
		t.Errorf("none: %v", err)
	}
}

// realUV is the machine's uv, or a skip.
func realUV(t *testing.T) string {
	uv, err := FindUV(os.LookupEnv)
	if err != nil {
		t.Skipf("no uv (hack/infra.d/72-uv.sh installs it): %v", err)
	}
	return uv
}

// TestResolveWithUV drives the real uv against the fake index: demo>=1
// (whose METADATA requires six) resolves to demo 1.0 and six 1.16.0,
// wheels only, for the target (not this host), and the compiled hashes
// are checked.
func TestResolveWithUV(t *testing.T) {
	uv := realUV(t)
	ix, w := demoIndex(t, false)
	ix.mu.Lock()
	delete(ix.projects, "demo")
	ix.mu.Unlock()
	ml := "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	ix.add("demo",
		fakeFile{name: ml, body: testWheel(t, "demo", "1.0", "cp311-cp311-manylinux_2_17_x86_64", "six>=1.10")},
		fakeFile{name: "demo-1.0-cp311-cp311-macosx_11_0_arm64.whl", body: testWheel(t, "demo", "1.0", "cp311-cp311-macosx_11_0_arm64", "six>=1.10")},
		fakeFile{name: "demo-2.0.tar.gz", body: []byte("an sdist uv must not build")})
	_ = w
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()},
		WithUVEnv(func(k string) (string, bool) {
			if k == "PREBAKE_UV" {
				return uv, true
			}
			return "", false
		}))
	in := readReqs(t, "demo>=1\n")
	got, err := r.Resolve(context.Background(), in, testTarget)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, g := range got {
		files = append(files, g.File)
	}
	if strings.Join(files, " ") != ml+" six-1.16.0-py2.py3-none-any.whl" {
		t.Errorf("wheels %v", files)
	}
	if got[0].Sha256 != sha256Hex(ix.projects["demo"][0].body) {
		t.Errorf("demo's sha256 %s", got[0].Sha256)
	}
	// A pyproject.toml's dependencies are resolved alike.
	pp, err := ReadPyproject(context.Background(), writeFile(t, t.TempDir(), "pyproject.toml", "[project]\nname = \"job\"\nversion = \"0\"\ndependencies = [\"demo>=1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Resolve(context.Background(), pp, testTarget); err != nil || len(got) != 2 {
		t.Errorf("pyproject.toml: %+v, %v", got, err)
	}
	// A requirement that only an sdist meets is refused by uv, naming it.
	_, err = r.Resolve(context.Background(), readReqs(t, "demo>=2\n"), testTarget)
	if !errors.Is(err, errdefs.NotFound) || !strings.Contains(err.Error(), "demo") || !strings.Contains(err.Error(), "wheels only") {
		t.Errorf("demo>=2 (sdist only): %v", err)
	}
	t.Logf("demo>=2: %v", err)
}

// TestResolveWithUVIT resolves six and numpy<2 for CPython 3.11 on
// manylinux x86_64 with the real uv, through the machine's pip
// configuration, and fetches the wheels.
func TestResolveWithUVIT(t *testing.T) {
	testenv.RequireIT(t)
	realUV(t)
	cfg, err := LoadIndexConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newTestResolver(t, cfg, WithUVEnv(os.LookupEnv))
	got, err := r.Resolve(context.Background(), readReqs(t, "six\nnumpy<2\n"), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Wheel{}
	for _, g := range got {
		names[g.Name] = g
		t.Logf("%s %s %s %d", g.Name, g.Version, g.File, g.Size)
	}
	if n, ok := names["numpy"]; !ok || !strings.HasPrefix(n.Version, "1.") || !strings.Contains(n.File, "cp311-cp311-manylinux") || !strings.Contains(n.File, "x86_64") {
		t.Errorf("numpy: %+v", n)
	}
	if _, ok := names["six"]; !ok || len(got) != 2 {
		t.Errorf("wheels %+v", got)
	}
}

// TestUVVersionInStep: the project's setup installs the uv prebake looks
// for in the CI cache.
func TestUVVersionInStep(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hack", "infra.d", "72-uv.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `uv_version="${PREBAKE_UV_VERSION:-` + UVVersion + `}"`; !strings.Contains(string(data), want) {
		t.Errorf("hack/infra.d/72-uv.sh does not say %s", want)
	}
}
