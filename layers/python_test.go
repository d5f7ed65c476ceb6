package layers

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/lock"
)

var updatePython = flag.Bool("update-python", false, "regenerate testdata/python-layer.golden")

type wf = sitepkgstest.File

// testWheels are two pure wheels and one with a native module, sharing a
// legacy namespace package's identical __init__.py.
func testWheels(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"alpha-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "alpha", "1.0", wf{Name: "alpha/__init__.py", Body: "A = 1\n"}, wf{Name: "ns/__init__.py", Body: "# ns\n"}),
		"beta-2.0-py3-none-any.whl":  sitepkgstest.Wheel(t, "beta", "2.0", wf{Name: "beta/__init__.py", Body: "B = 2\n"}, wf{Name: "ns/__init__.py", Body: "# ns\n"}),
		"native-3.1-cp311-cp311-manylinux_2_17_x86_64.whl": sitepkgstest.Wheel(t, "native", "3.1",
			wf{Name: "native/__init__.py", Body: "from ._c import f\n"}, wf{Name: "native/_c.cpython-311-x86_64-linux-gnu.so", Body: "\x7fELF...", Mode: 0o755}),
	}
}

// wheelLock is the demo jars' lock plus wheels (file -> bytes), and the
// local files of its jars and of its wheels.
func wheelLock(t *testing.T, wheels map[string][]byte) (*lock.File, []string, []string) {
	t.Helper()
	dir := t.TempDir()
	lf, _ := makeLock(t, dir, demoArtifacts...)
	whls := sitepkgstest.AddWheels(t, lf, wheels)
	var jars []string
	for _, a := range lf.Jars() {
		jars = append(jars, filepath.Join(dir, a.Sha256[:12]+".jar"))
	}
	return lf, jars, whls
}

func bakeWheels(t *testing.T, lf *lock.File, jars, wheels []string, target string) (*Result, error) {
	t.Helper()
	return Bake(context.Background(), BakeInput{Lock: lf, Jars: lock.LocalJars(jars), Wheels: lock.LocalJars(wheels),
		Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: "oci:" + target}, WithCacheDir(t.TempDir()))
}

// TestBakeWheels: a lock with jars and wheels gets the jars' layer and,
// right above it, one layer of the merged site-packages tree at
// DefaultPythonDir; the image's PYTHONPATH names it; the same input gives
// the same digests twice (and the python layer's digest is golden); a
// second bake to the same target is a cache hit.
func TestBakeWheels(t *testing.T) {
	lf, jars, wheels := wheelLock(t, testWheels(t))
	target := filepath.Join(t.TempDir(), "out")
	res, err := bakeWheels(t, lf, jars, wheels, target)
	if err != nil {
		t.Fatal(err)
	}
	if res.PythonDir != DefaultPythonDir {
		t.Errorf("PythonDir = %q", res.PythonDir)
	}
	if diff := cmp.Diff([]string{"", RolePython}, roles(res)); diff != "" {
		t.Errorf("layer roles (-want +got):\n%s", diff)
	}
	py := res.Layers[len(res.Layers)-1]
	if diff := cmp.Diff([]string{"alpha-1.0-py3-none-any.whl", "beta-2.0-py3-none-any.whl", "native-3.1-cp311-cp311-manylinux_2_17_x86_64.whl"}, py.Files); diff != "" {
		t.Errorf("python layer files (-want +got):\n%s", diff)
	}

	// The tree.
	nBase := len(addedLayers(t, "oci:"+baseImageDir+":"+baseImageAmd64Tag, 0))
	files := imageFiles(t, res.Ref, nBase+1)
	var got []string
	for name := range files {
		got = append(got, "/"+strings.TrimPrefix(name, "/"))
	}
	slices.Sort(got)
	pd := DefaultPythonDir + "/"
	want := []string{
		pd + "alpha-1.0.dist-info/INSTALLER", pd + "alpha-1.0.dist-info/METADATA", pd + "alpha-1.0.dist-info/RECORD", pd + "alpha-1.0.dist-info/WHEEL",
		pd + "alpha/__init__.py",
		pd + "beta-2.0.dist-info/INSTALLER", pd + "beta-2.0.dist-info/METADATA", pd + "beta-2.0.dist-info/RECORD", pd + "beta-2.0.dist-info/WHEEL",
		pd + "beta/__init__.py",
		pd + "native-3.1.dist-info/INSTALLER", pd + "native-3.1.dist-info/METADATA", pd + "native-3.1.dist-info/RECORD", pd + "native-3.1.dist-info/WHEEL",
		pd + "native/__init__.py", pd + "native/_c.cpython-311-x86_64-linux-gnu.so",
		pd + "ns/__init__.py",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("python layer tree (-want +got):\n%s", diff)
	}

	// The config: PYTHONPATH, the base's Env kept.
	env := imageEnv(t, res.Ref)
	if diff := cmp.Diff([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SPARK_HOME=/opt/spark", "PYTHONPATH=" + DefaultPythonDir}, env); diff != "" {
		t.Errorf("config Env (-want +got):\n%s", diff)
	}

	// Reproducible: another bake of the same input, another target.
	res2, err := bakeWheels(t, lf, jars, wheels, filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	if res2.Digest != res.Digest || res2.Layers[1].Digest != py.Digest {
		t.Errorf("two bakes of the same input: %s %s, then %s %s", res.Digest, py.Digest, res2.Digest, res2.Layers[1].Digest)
	}
	golden := filepath.Join("testdata", "python-layer.golden")
	line := fmt.Sprintf("%s %s\n", py.Digest, py.DiffID)
	if *updatePython {
		if err := os.WriteFile(golden, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if w, err := os.ReadFile(golden); err != nil || string(w) != line {
		t.Errorf("python layer %s, golden %q (%v); -update-python if the change is meant", line, w, err)
	}

	// A cache hit.
	hit, err := bakeWheels(t, lf, jars, wheels, target)
	if err != nil {
		t.Fatal(err)
	}
	if !hit.CacheHit || hit.Digest != res.Digest || hit.PythonDir != DefaultPythonDir {
		t.Errorf("second bake: hit %t digest %s pythonDir %q", hit.CacheHit, hit.Digest, hit.PythonDir)
	}
}

// TestBakeWheelsRefused: a wheel that escapes its root, one whose bytes
// are not the lock's, and two wheels writing one path are refused (65)
// naming what refused them, and nothing is written to the target.
func TestBakeWheelsRefused(t *testing.T) {
	good := sitepkgstest.Wheel(t, "alpha", "1.0", wf{Name: "alpha/__init__.py", Body: "A = 1\n"})
	for _, tc := range []struct {
		name   string
		wheels map[string][]byte
		tamper bool
		is     error
		says   []string
	}{
		{"escape", map[string][]byte{"evil-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "evil", "1.0", wf{Name: "../../../opt/spark/jars/x.py", Body: "x\n"})},
			false, safepath.ErrUnsafe, []string{"evil-1.0-py3-none-any.whl"}},
		{"symlink", map[string][]byte{"evil-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "evil", "1.0", wf{Name: "evil/link", Body: "/etc/passwd", Mode: 0o777 | os.ModeSymlink})},
			false, safepath.ErrUnsafe, []string{"evil-1.0-py3-none-any.whl"}},
		{"conflict", map[string][]byte{"alpha-1.0-py3-none-any.whl": good, "beta-2.0-py3-none-any.whl": sitepkgstest.Wheel(t, "beta", "2.0", wf{Name: "alpha/__init__.py", Body: "B\n"})},
			false, sitepkgs.ErrConflict, []string{"alpha-1.0-py3-none-any.whl", "beta-2.0-py3-none-any.whl", "alpha/__init__.py"}},
		{"tampered", map[string][]byte{"alpha-1.0-py3-none-any.whl": good}, true, lock.ErrCorruptBlob, []string{"alpha-1.0-py3-none-any.whl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf, jars, wheels := wheelLock(t, tc.wheels)
			if tc.tamper {
				c := filepath.Join(t.TempDir(), "copy")
				if err := os.WriteFile(c, []byte(strings.Repeat("X", int(lf.Wheels()[0].Size))), 0o644); err != nil {
					t.Fatal(err)
				}
				wheels[0] = c
			}
			target := filepath.Join(t.TempDir(), "out")
			_, err := bakeWheels(t, lf, jars, wheels, target)
			if !errors.Is(err, tc.is) || !errors.Is(err, errdefs.Invalid) {
				t.Fatalf("err = %v, want %v (invalid input)", err, tc.is)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %s", err, s)
				}
			}
			if _, err := os.Stat(target); err == nil {
				t.Errorf("the target was written")
			}
		})
	}
}

func TestPythonPathEnv(t *testing.T) {
	const d = "/opt/prebake/python/site-packages"
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{"PYTHONPATH=" + d}},
		{[]string{"A=1"}, []string{"A=1", "PYTHONPATH=" + d}},
		{[]string{"PYTHONPATH="}, []string{"PYTHONPATH=" + d}},
		{[]string{"PYTHONPATH=/opt/spark/python/lib/pyspark.zip", "B=2"}, []string{"PYTHONPATH=/opt/spark/python/lib/pyspark.zip:" + d, "B=2"}},
		{[]string{"PYTHONPATH=/x:" + d}, []string{"PYTHONPATH=/x:" + d}},
	} {
		if diff := cmp.Diff(tc.want, pythonPathEnv(tc.in, d)); diff != "" {
			t.Errorf("pythonPathEnv(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestCleanPythonDir(t *testing.T) {
	for _, d := range []string{"relative/dir", "/a:b"} {
		if _, err := cleanPythonDir(d); errdefs.KindOf(err) != errdefs.BadArgument {
			t.Errorf("cleanPythonDir(%q): %v, want a bad argument", d, err)
		}
	}
}

func imageEnv(t *testing.T, ref string) []string {
	t.Helper()
	cf, err := testImage(t, ref).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cf.Config.Env
}

// testImage reads the image ref (not an index).
func testImage(t *testing.T, ref string) v1.Image {
	t.Helper()
	r, err := parseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadBase(context.Background(), r, testOptions(t))
	if err != nil || b.img == nil {
		t.Fatalf("%s: %v (an index?)", ref, err)
	}
	return b.img
}

// TestPythonLayerImports: the wheels' layer unpacked under a root is
// importable by a real Python through PYTHONPATH=<root>/<PythonDir>, with
// no site-packages of its own (-S). Skipped without python3.
func TestPythonLayerImports(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	lf, jars, wheels := wheelLock(t, testWheels(t))
	res, err := bakeWheels(t, lf, jars, wheels, filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := testImage(t, res.Ref).Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := ls[len(ls)-1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	root := t.TempDir()
	tar := exec.Command("tar", "-xf", "-", "-C", root)
	tar.Stdin = rc
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	cmd := exec.Command(py, "-S", "-c", "import alpha, beta, ns; print(alpha.A, beta.B)")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, DefaultPythonDir))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1 2" {
		t.Fatalf("python: %v: %q", err, out)
	}
}
