package cmd

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
)

var updatePythonShip = flag.Bool("update-python-ship", false, "rewrite cmd/testdata/python_ship/*.golden")

// shipNormalizer replaces a run's own paths and digests in a rewritten
// argv with stable names, for goldens.
func shipNormalizer(pairs ...string) func(string) string {
	r := strings.NewReplacer(pairs...)
	digest := regexp.MustCompile(`sha256([:/])[0-9a-f]{64}`)
	key := regexp.MustCompile(`site-packages/[0-9a-f]{64}`)
	return func(s string) string {
		s = r.Replace(s)
		s = digest.ReplaceAllString(s, "sha256${1}DIGEST")
		return key.ReplaceAllString(s, "site-packages/KEY")
	}
}

// checkShipGolden compares a rewritten argv (one argument a line) with
// testdata/python_ship/name.golden.
func checkShipGolden(t *testing.T, name string, args []string, norm func(string) string) {
	t.Helper()
	var b strings.Builder
	for _, a := range args {
		b.WriteString(norm(a) + "\n")
	}
	path := filepath.Join(repoRoot(t), "cmd", "testdata", "python_ship", name+".golden")
	if *updatePythonShip {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-python-ship)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("%s: rewritten argv (-want +got):\n%s", name, diff)
	}
}

// pyShipFixture is pyFixture with installable wheels (a RECORD of their
// files): a pure one (six) and a manylinux one (fastmath, with a native
// module).
func pyShipFixture(t *testing.T) (ix *pyIndex, reqs, dir string) {
	ix, _, dir = pyFixture(t)
	type f = sitepkgstest.File
	pure := sitepkgstest.Wheel(t, "six", "1.16.0", f{Name: "six/__init__.py", Body: "VERSION = '1.16.0'\n"})
	native := sitepkgstest.Wheel(t, "fastmath", "2.0.1", f{Name: "fastmath/__init__.py", Body: "from ._c import f\n"},
		f{Name: "fastmath/_c.cpython-311-x86_64-linux-gnu.so", Body: "\x7fELF", Mode: 0o755})
	ix.projects = map[string]map[string][]byte{}
	ix.add("six", "six-1.16.0-py2.py3-none-any.whl", pure)
	ix.add("fastmath", "fastmath-2.0.1-cp311-cp311-manylinux_2_17_x86_64.whl", native)
	reqs = filepath.Join(dir, "requirements.txt")
	body := "six==1.16.0 --hash=sha256:" + sha256Of(pure) + "\nfastmath==2.0.1 --hash=sha256:" + sha256Of(native) + "\n"
	if err := os.WriteFile(reqs, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return ix, reqs, dir
}

// pyShipFlags are the Python half's flags of pyFixture's requirements.
func pyShipFlags(reqs string) []string {
	return []string{"--py-requirements", reqs, "--python-version", "3.11", "--python-platform", "manylinux_2_36_x86_64"}
}

// TestShipPythonImage: submit --image-target bakes the wheels into the
// image with the jars (the image's PYTHONPATH names them): the rewritten
// argv sets the baked image and nothing that installs or ships Python
// packages at run time.
func TestShipPythonImage(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	root := repoRoot(t)
	target := "oci:" + filepath.Join(dir, "image")
	base := "oci:" + filepath.Join(root, "testdata/base-image") + ":3.5.0-amd64"
	args := []string{
		"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--packages", "org.slf4j:slf4j-api:2.0.7",
		"--conf", "spark.kubernetes.container.image=" + base,
		"local:///opt/app/main.py",
	}
	p, err := runPrepared(t, append([]string{"--image-target", target}, pyShipFlags(reqs)...), args)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	checkShipGolden(t, "image", p.Sub.Args(), shipNormalizer(target, "$TARGET", base, "$BASE"))
	if v := p.Sub.Getenv("PYTHONPATH"); v != os.Getenv("PYTHONPATH") {
		t.Errorf("cluster mode: PYTHONPATH %q set for spark-submit", v)
	}
}

// TestShipPythonStore: submit --store bakes the wheels' archive with the
// jars and ships it with spark.archives and PYTHONPATH=./pydeps; a user's
// own archives and PYTHONPATH are kept, prebake's appended, with a
// warning each.
func TestShipPythonStore(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	storeDir := filepath.Join(dir, "store")
	args := []string{
		"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--packages", "org.slf4j:slf4j-api:2.0.7",
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.0",
		"--archives", "s3a://team/env.tar.gz#env",
		"--conf", "spark.executorEnv.PYTHONPATH=/opt/team",
		"local:///opt/app/main.py", "--day", "1",
	}
	p, err := runPrepared(t, append([]string{"--store", "file://" + storeDir}, pyShipFlags(reqs)...), args)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	checkShipGolden(t, "store", p.Sub.Args(), shipNormalizer(storeDir, "$STORE"))
	// The archive is in the store, content-addressed.
	m, _ := filepath.Glob(filepath.Join(storeDir, "archives", "sha256", "*", "site-packages.tar.gz"))
	if len(m) != 1 {
		t.Errorf("store archives: %v, want one", m)
	}

	// rewrite --store finds the set (its manifest names the archive) and
	// says what it merged.
	argv := append(append([]string{"rewrite", "-o", "json", "--store", "file://" + storeDir, "--no-default-repositories", "--repositories", "file://" + filepath.Join(repoRoot(t), "testdata/demo-repo") + "/"}, pyShipFlags(reqs)...), "--")
	out, stderr, code := runCLI(t, append(argv, args...)...)
	if code != 0 {
		t.Fatalf("rewrite --store: exit %d\n%s", code, stderr)
	}
	var r struct {
		Args     []string `json:"args"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	checkShipGolden(t, "store", r.Args, shipNormalizer(storeDir, "$STORE"))
	want := []string{
		`spark.archives: the user's s3a://team/env.tar.gz#env is kept, and prebake's file://` + storeDir + `/archives/sha256/` + filepath.Base(filepath.Dir(m[0])) + `/site-packages.tar.gz#pydeps joined after it (",")`,
		`spark.executorEnv.PYTHONPATH: the user's /opt/team is kept, and prebake's ./pydeps joined after it (":")`,
	}
	var merged []string
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, "spark.") {
			merged = append(merged, w)
		}
	}
	if diff := cmp.Diff(want, merged); diff != "" {
		t.Errorf("merge warnings (-want +got):\n%s", diff)
	}
}

// TestShipPythonLocal: local mode unpacks the wheels into the cache (one
// content-addressed directory, reused) and puts it on the PYTHONPATH of
// spark-submit's process (the driver) and of the Python workers
// (spark.executorEnv.PYTHONPATH); nothing is shipped with spark.archives.
func TestShipPythonLocal(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	cache := filepath.Join(dir, "cache")
	app := filepath.Join(dir, "app.py")
	os.WriteFile(app, []byte("import subprocess\nsubprocess.run(\"pip install six\", shell=True)\nimport six\n"), 0o644)
	t.Setenv("PYTHONPATH", "/opt/mine")
	args := []string{"--master", "local[2]", "--packages", "org.slf4j:slf4j-api:2.0.7", app}
	p, err := runPrepared(t, append([]string{"--cache", cache}, pyShipFlags(reqs)...), args)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	norm := shipNormalizer(cache, "$CACHE", dir, "$DIR")
	checkShipGolden(t, "local", p.Sub.Args(), norm)
	pp := p.Sub.Getenv("PYTHONPATH")
	if want := "$CACHE/python/site-packages/KEY"; norm(pp) != "/opt/mine:"+want {
		t.Errorf("spark-submit's PYTHONPATH = %q, want /opt/mine:%s", norm(pp), want)
	}
	site := strings.TrimPrefix(pp, "/opt/mine:")
	for _, f := range []string{"six/__init__.py", "fastmath/__init__.py", "six-1.16.0.dist-info/METADATA"} {
		if _, err := os.Stat(filepath.Join(site, f)); err != nil {
			t.Errorf("unpacked tree: %v", err)
		}
	}
	// No half-written sibling is left.
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(site), ".tmp-*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
}

// TestRewritePythonShipJSON: prebake rewrite reads the Python half too:
// -o json has the driver's PYTHONPATH in env, and the warning (file:line)
// of the app's own pip install.
func TestRewritePythonShipJSON(t *testing.T) {
	ix, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	app := filepath.Join(dir, "job.py")
	os.WriteFile(app, []byte("import os\n\nos.system('pip install requests')\n"), 0o644)
	t.Setenv("PYTHONPATH", "")
	cache := filepath.Join(dir, "cache")
	lockPath := filepath.Join(dir, "prebake.lock")
	argv := append(append([]string{"rewrite", "-o", "json", "--cache", cache, "--lock", lockPath}, pyShipFlags(reqs)...), "--", "--master", "local[1]", app)
	out, stderr, code := runCLI(t, argv...)
	if code != 0 {
		t.Fatalf("rewrite: exit %d\n%s", code, stderr)
	}
	var r struct {
		Args     []string          `json:"args"`
		Env      map[string]string `json:"env"`
		Warnings []string          `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	pp := r.Env["PYTHONPATH"]
	if !strings.HasPrefix(pp, cache) {
		t.Errorf("env = %v, want PYTHONPATH under %s", r.Env, cache)
	}
	want := app + ":3: it installs packages at run time (pip install); the lock's wheels are shipped with the job: delete the install and add the package to the Python requirements instead"
	if !cmp.Equal(r.Warnings, []string{want}) {
		t.Errorf("warnings = %q, want [%q]", r.Warnings, want)
	}
	// Again from the lock: no index request.
	before := ix.requests.Load()
	if _, stderr, code := runCLI(t, append(argv[:len(argv):len(argv)], "--frozen")...); code != 0 {
		t.Fatalf("frozen rewrite: exit %d\n%s", code, stderr)
	}
	if n := ix.requests.Load() - before; n != 0 {
		t.Errorf("frozen rewrite: %d index requests", n)
	}
}
