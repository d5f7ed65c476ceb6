package s3store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/s3store/s3test"
)

type wf = sitepkgstest.File

func testWheels(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"alpha-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "alpha", "1.0", wf{Name: "alpha/__init__.py", Body: "A = 1\n"}),
		"native-3.1-cp311-cp311-manylinux_2_17_x86_64.whl": sitepkgstest.Wheel(t, "native", "3.1",
			wf{Name: "native/__init__.py", Body: "from ._c import f\n"}, wf{Name: "native/_c.cpython-311-x86_64-linux-gnu.so", Body: "\x7fELF...", Mode: 0o755}),
	}
}

// wheelSet is a lock of two jars and wheels, the jars' local files and the
// wheels'.
func wheelSet(t *testing.T, wheels map[string][]byte) (*lock.File, []string, []string) {
	t.Helper()
	lf, jars := s3test.Fixture(t, t.TempDir(), 7, s3test.Jar{Name: "a", Size: 3 << 10}, s3test.Jar{Name: "b", Size: 2 << 10})
	return lf, jars, sitepkgstest.AddWheels(t, lf, wheels)
}

// bakeWheelSet bakes the test wheels' set into a new file:// store.
func bakeWheelSet(t *testing.T) (st *s3store.Store, dir string, lf *lock.File, jars, wheels []string, res *s3store.BakeResult) {
	t.Helper()
	ctx := context.Background()
	lf, jars, wheels = wheelSet(t, testWheels(t))
	dir = t.TempDir()
	st, err := s3store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err = st.Bake(ctx, lf, lock.LocalJars(jars), s3store.WithWheels(lock.LocalJars(wheels)))
	if err != nil {
		t.Fatal(err)
	}
	return st, dir, lf, jars, wheels, res
}

func sha(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestBakeWheelsFileStore: a lock with wheels puts its jars, one archive
// named by its sha256 and a manifest naming it; the archive is a tar.gz of
// the merged site-packages tree; the second bake is a hit; a verified hit
// re-sends a deleted archive, the same bytes; PythonConf ships it.
func TestBakeWheelsFileStore(t *testing.T) {
	ctx := context.Background()
	st, dir, lf, jars, wheels, res := bakeWheelSet(t)
	if res.Hit || res.Uploaded != 2 || !res.ArchiveSent {
		t.Fatalf("first bake: %+v", res)
	}
	py := res.Manifest.Python
	if py == nil {
		t.Fatal("no python in the manifest")
	}
	archive := filepath.Join(dir, filepath.FromSlash(py.Archive.Path))
	if got := sha(t, archive); got != py.Archive.Sha256 || !strings.HasPrefix(py.Archive.Path, "archives/sha256/"+got+"/") {
		t.Errorf("archive %s has sha256 %s", py.Archive.Path, got)
	}
	if diff := cmp.Diff([]string{"alpha-1.0-py3-none-any.whl", "native-3.1-cp311-cp311-manylinux_2_17_x86_64.whl"}, wheelFiles(py)); diff != "" {
		t.Errorf("manifest wheels (-want +got):\n%s", diff)
	}

	// The manifest read back (ParseManifest checks the hash over jars and wheels).
	m, err := st.Manifest(ctx, lf.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Manifest, m); diff != "" {
		t.Errorf("manifest read back (-wrote +read):\n%s", diff)
	}

	// The Spark settings.
	conf, err := st.PythonConf(ctx, m, s3store.StyleS3A)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"spark.archives", "file://" + filepath.ToSlash(archive) + "#pydeps"},
		{"spark.executorEnv.PYTHONPATH", "./pydeps"},
		{"spark.kubernetes.driverEnv.PYTHONPATH", "./pydeps"},
		{"spark.yarn.appMasterEnv.PYTHONPATH", "./pydeps"},
	}
	if diff := cmp.Diff(want, conf); diff != "" {
		t.Errorf("PythonConf (-want +got):\n%s", diff)
	}

	// A hit sends nothing.
	hit, err := st.Bake(ctx, lf, lock.LocalJars(jars), s3store.WithWheels(lock.LocalJars(wheels)))
	if err != nil || !hit.Hit || hit.BytesSent != 0 || hit.ArchiveSent {
		t.Fatalf("second bake: %+v, %v", hit, err)
	}

	// A verified hit re-sends a deleted archive: the same bytes.
	before, _ := os.ReadFile(archive)
	if err := os.Remove(archive); err != nil {
		t.Fatal(err)
	}
	rep, err := st.Bake(ctx, lf, lock.LocalJars(jars), s3store.WithWheels(lock.LocalJars(wheels)), s3store.WithVerify(true))
	if err != nil || !rep.ArchiveSent || rep.Repaired != 1 {
		t.Fatalf("verified bake: %+v, %v", rep, err)
	}
	if after, _ := os.ReadFile(archive); !bytes.Equal(before, after) {
		t.Error("the re-sent archive differs")
	}
}

func wheelFiles(p *s3store.ManifestPython) []string {
	var out []string
	for _, w := range p.Wheels {
		out = append(out, w.File)
	}
	return out
}

// TestBakeWheelsFakeS3: the same through the S3 API (in-process server).
func TestBakeWheelsFakeS3(t *testing.T) {
	ctx := context.Background()
	endpoint, ct := fakeS3(t, "jars")
	lf, jars, wheels := wheelSet(t, testWheels(t))
	st, err := s3store.Open(ctx, "s3://jars/p", s3store.WithEndpoint(endpoint), s3store.WithPathStyle(true),
		s3store.WithStaticCredentials("k", "s"), s3store.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Bake(ctx, lf, lock.LocalJars(jars), s3store.WithWheels(lock.LocalJars(wheels)))
	if err != nil || !res.ArchiveSent {
		t.Fatalf("bake: %+v, %v", res, err)
	}
	m, err := st.Manifest(ctx, lf.Hash())
	if err != nil || m.Python == nil || m.Python.Archive != res.Manifest.Python.Archive {
		t.Fatalf("manifest: %+v, %v", m, err)
	}
	conf, err := st.PythonConf(ctx, m, s3store.StyleS3A)
	if err != nil {
		t.Fatal(err)
	}
	if want := "s3a://jars/p/" + m.Python.Archive.Path + "#pydeps"; conf[0][1] != want {
		t.Errorf("spark.archives = %s, want %s", conf[0][1], want)
	}
	// A second store (another machine) makes the same archive: same key.
	st2, err := s3store.Open(ctx, "s3://jars/q", s3store.WithEndpoint(endpoint), s3store.WithPathStyle(true),
		s3store.WithStaticCredentials("k", "s"), s3store.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		t.Fatal(err)
	}
	res2, err := st2.Bake(ctx, lf, lock.LocalJars(jars), s3store.WithWheels(lock.LocalJars(wheels)))
	if err != nil || res2.Manifest.Python.Archive != res.Manifest.Python.Archive {
		t.Fatalf("second store: %+v, %v", res2, err)
	}
}

// TestBuildArchiveDeterministic: the same wheels give the same archive
// bytes twice, from different staging directories and blob paths.
func TestBuildArchiveDeterministic(t *testing.T) {
	var outs [][]byte
	var sums []string
	for range 2 {
		lf, _, wheels := wheelSet(t, testWheels(t))
		var buf bytes.Buffer
		sum, n, err := s3store.BuildArchive(context.Background(), lf, wheels, t.TempDir(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(buf.Len()) {
			t.Errorf("size %d, wrote %d", n, buf.Len())
		}
		outs, sums = append(outs, buf.Bytes()), append(sums, sum)
	}
	if !bytes.Equal(outs[0], outs[1]) || sums[0] != sums[1] {
		t.Errorf("two archives of the same wheels differ: %s, %s", sums[0], sums[1])
	}
}

// TestJarManifestBytes: a jar-only set's manifest has exactly the bytes
// of the manifest before wheels existed (no "python" key).
func TestJarManifestBytes(t *testing.T) {
	lf, _ := s3test.Fixture(t, t.TempDir(), 3, s3test.Jar{Name: "a", Size: 100})
	m := s3store.NewManifest(lf)
	got, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The manifest type as it was: jars, lockHash, version.
	type oldManifest struct {
		Jars     []s3store.ManifestJar `json:"jars"`
		LockHash string                `json:"lockHash"`
		Version  int                   `json:"version"`
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(oldManifest{Jars: m.Jars, LockHash: m.LockHash, Version: m.Version}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), string(got)); diff != "" {
		t.Errorf("jar-only manifest (-old +new):\n%s", diff)
	}
}

// TestBakeWheelsHostile: a wheel escaping its root, a symlink member, a
// blob that is not the lock's and two wheels writing one path are refused
// (65) before any byte is sent; a lock with wheels and no WithWheels is
// refused as before wheels existed.
func TestBakeWheelsHostile(t *testing.T) {
	ctx := context.Background()
	good := sitepkgstest.Wheel(t, "alpha", "1.0", wf{Name: "alpha/__init__.py", Body: "A = 1\n"})
	for _, tc := range []struct {
		name     string
		wheels   map[string][]byte
		tamper   bool
		noWheels bool
		is       error
	}{
		{"escape", map[string][]byte{"evil-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "evil", "1.0", wf{Name: "/etc/cron.d/x", Body: "x\n"})}, false, false, safepath.ErrUnsafe},
		{"symlink", map[string][]byte{"evil-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "evil", "1.0", wf{Name: "evil/l", Body: "/etc", Mode: 0o777 | os.ModeSymlink})}, false, false, safepath.ErrUnsafe},
		{"conflict", map[string][]byte{"alpha-1.0-py3-none-any.whl": good, "beta-1.0-py3-none-any.whl": sitepkgstest.Wheel(t, "beta", "1.0", wf{Name: "alpha/__init__.py", Body: "B\n"})}, false, false, sitepkgs.ErrConflict},
		{"tampered", map[string][]byte{"alpha-1.0-py3-none-any.whl": good}, true, false, lock.ErrCorruptBlob},
		{"no WithWheels", map[string][]byte{"alpha-1.0-py3-none-any.whl": good}, false, true, lock.ErrUnsupportedKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf, jars, wheels := wheelSet(t, tc.wheels)
			if tc.tamper {
				c := filepath.Join(t.TempDir(), "c")
				os.WriteFile(c, bytes.Repeat([]byte("X"), int(lf.Wheels()[0].Size)), 0o644)
				wheels[0] = c
			}
			dir := t.TempDir()
			st, err := s3store.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			opts := []s3store.BakeOption{s3store.WithWheels(lock.LocalJars(wheels))}
			if tc.noWheels {
				opts = nil
			}
			_, err = st.Bake(ctx, lf, lock.LocalJars(jars), opts...)
			if !errors.Is(err, tc.is) || !errors.Is(err, errdefs.Invalid) {
				t.Fatalf("Bake: %v, want %v (invalid input)", err, tc.is)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("the store holds %d entries after a refusal", len(ents))
			}
		})
	}
}

// TestParseManifestPythonHostile: a manifest whose Python half names an
// archive outside archives/sha256/<hex>/, a hostile wheel name, or wheels
// its lockHash does not cover is refused (65).
func TestParseManifestPythonHostile(t *testing.T) {
	_, _, _, _, _, res := bakeWheelSet(t)
	for name, edit := range map[string]func(m *s3store.Manifest){
		"archive path":   func(m *s3store.Manifest) { m.Python.Archive.Path = "archives/sha256/../../../etc/passwd" },
		"archive sha256": func(m *s3store.Manifest) { m.Python.Archive.Sha256 = "../x" },
		"wheel name":     func(m *s3store.Manifest) { m.Python.Wheels[0].File = "../alpha-1.0-py3-none-any.whl" },
		"wheel sha256":   func(m *s3store.Manifest) { m.Python.Wheels[0].Sha256 = strings.Repeat("0", 64) },
		"no wheels":      func(m *s3store.Manifest) { m.Python.Wheels = nil },
		"dropped python": func(m *s3store.Manifest) { m.Python = nil },
	} {
		t.Run(name, func(t *testing.T) {
			data, _ := res.Manifest.Marshal()
			var m s3store.Manifest
			json.Unmarshal(data, &m)
			edit(&m)
			bad, _ := m.Marshal()
			if _, err := s3store.ParseManifest("test", bad); !errors.Is(err, errdefs.Invalid) {
				t.Errorf("ParseManifest: %v, want invalid input", err)
			}
		})
	}
}

// TestGCArchives: an archive stays while its set does, and goes with it.
func TestGCArchives(t *testing.T) {
	ctx := context.Background()
	st, _, _, _, _, res := bakeWheelSet(t)
	path := res.Manifest.Python.Archive.Path
	kept, err := st.GC(ctx, func(string, time.Time) bool { return true })
	if err != nil || len(kept.DeletedJars) != 0 {
		t.Fatalf("GC keeping the set: %+v, %v", kept, err)
	}
	gone, err := st.GC(ctx, func(string, time.Time) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if !contains(gone.DeletedJars, path) {
		t.Errorf("GC deleted %v, not the archive %s", gone.DeletedJars, path)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestArchiveImports: the archive unpacked as Spark unpacks
// spark.archives=<url>#pydeps (into ./pydeps of the working directory)
// is importable by a real Python through PYTHONPATH=./pydeps, with no
// site-packages of its own (-S). Skipped without python3.
func TestArchiveImports(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	_, dir, _, _, _, res := bakeWheelSet(t)
	work := t.TempDir()
	unpacked := filepath.Join(work, s3store.ArchiveName)
	if err := os.Mkdir(unpacked, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, filepath.FromSlash(res.Manifest.Python.Archive.Path))
	if out, err := exec.Command("tar", "-xzf", archive, "-C", unpacked).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	cmd := exec.Command(py, "-S", "-c", "import alpha, os; print(alpha.A, os.path.relpath(alpha.__file__), os.access('pydeps/native/_c.cpython-311-x86_64-linux-gnu.so', os.X_OK))")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PYTHONPATH=./"+s3store.ArchiveName)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v: %s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "1 pydeps/alpha/__init__.py True"; got != want {
		t.Errorf("python printed %q, want %q", got, want)
	}
}
