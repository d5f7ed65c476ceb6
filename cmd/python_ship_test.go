package cmd

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/submit"
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

// pyShipFixture is pyFixture's index and pip configuration with
// installable wheels (a RECORD of their files): a pure one (six) and a
// manylinux one (fastmath, with a native module).
func pyShipFixture(t *testing.T) (ix *sitepkgstest.Index, reqs, dir string) {
	ix = newPyIndex(t)
	dir = pipEnv(t, ix.URL+"/simple/")
	reqs = filepath.Join(dir, "requirements.txt")
	addWheelPair(t, ix, reqs, pureWheel{"six", "1.16.0", "py2.py3-none-any", "VERSION = '1.16.0'\n"}, "fastmath", "2.0.1")
	return ix, reqs, dir
}

// pureWheel is a pure-Python wheel of dist at version, its tag, and the
// body of its module dist/__init__.py.
type pureWheel struct{ dist, version, tag, body string }

// addWheelPair adds two installable wheels (a RECORD of their files) to
// ix, pure and a manylinux one of native at version (its module imports a
// native one), and writes reqs, a hashed requirements file of both.
func addWheelPair(t *testing.T, ix *sitepkgstest.Index, reqs string, pure pureWheel, native, version string) {
	t.Helper()
	type f = sitepkgstest.File
	pw := sitepkgstest.Wheel(t, pure.dist, pure.version, f{Name: pure.dist + "/__init__.py", Body: pure.body})
	nw := sitepkgstest.Wheel(t, native, version, f{Name: native + "/__init__.py", Body: "from ._c import f\n"},
		f{Name: native + "/_c.cpython-311-x86_64-linux-gnu.so", Body: "\x7fELF", Mode: 0o755})
	ix.Add(pure.dist, pure.dist+"-"+pure.version+"-"+pure.tag+".whl", pw)
	ix.Add(native, native+"-"+version+"-cp311-cp311-manylinux_2_17_x86_64.whl", nw)
	body := pure.dist + "==" + pure.version + " --hash=sha256:" + sha256Of(pw) + "\n" + native + "==" + version + " --hash=sha256:" + sha256Of(nw) + "\n"
	must(t, os.WriteFile(reqs, []byte(body), 0o644))
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
	r := rewriteJSON(t, append(argv, args...))
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
	flags := append([]string{"rewrite", "-o", "json", "--cache", cache, "--lock", lockPath}, pyShipFlags(reqs)...)
	submission := []string{"--", "--master", "local[1]", app}
	r := rewriteJSON(t, append(flags[:len(flags):len(flags)], submission...))
	if pp := r.Env["PYTHONPATH"]; !strings.HasPrefix(pp, cache) {
		t.Errorf("env = %v, want PYTHONPATH under %s", r.Env, cache)
	}
	want := app + ":3: it installs packages at run time (pip install); the lock's wheels are shipped with the job: delete the install and add the package to the Python requirements instead"
	if !cmp.Equal(r.Warnings, []string{want}) {
		t.Errorf("warnings = %q, want [%q]", r.Warnings, want)
	}
	// Again, frozen: from the lock and the cache, no index request.
	before := ix.Requests.Load()
	rewriteJSON(t, append(append(flags, "--frozen"), submission...))
	if n := ix.Requests.Load() - before; n != 0 {
		t.Errorf("frozen rewrite: %d index requests", n)
	}
}

// shipRewrite is the part of rewrite -o json these tests read.
type shipRewrite struct {
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	Warnings []string          `json:"warnings"`
}

// rewriteJSON runs prebake with argv (a rewrite -o json) and decodes its
// result; a failure is fatal.
func rewriteJSON(t *testing.T, argv []string) shipRewrite {
	t.Helper()
	out, stderr, code := runCLI(t, argv...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", argv, code, stderr)
	}
	var r shipRewrite
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestShipPythonTarget: without --python-version and --python-platform,
// a driver here with no python3 (PATH is empty) takes the lock's target,
// and with no lock either the run is a usage error (64) that says what
// to give.
func TestShipPythonTarget(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	app := filepath.Join(dir, "app.py")
	os.WriteFile(app, []byte("import six\n"), 0o644)
	cache := filepath.Join(dir, "cache")
	lockPath := filepath.Join(dir, "prebake.lock")
	rewrite := func(extra ...string) (string, string, int) {
		return runCLI(t, append(append([]string{"rewrite", "--cache", cache, "--py-requirements", reqs}, extra...), "--", "--master", "local[1]", app)...)
	}
	if _, stderr, code := rewrite(); code != exitcode.Usage || !strings.Contains(stderr, "--python-version") {
		t.Errorf("no target anywhere: exit %d, want 64 naming --python-version\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, append([]string{"resolve", "--cache", cache, "--lock", lockPath}, pyShipFlags(reqs)...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	_, stderr, code := rewrite("--lock", lockPath, "--frozen")
	if code != 0 || !strings.Contains(stderr, "python 3.11, manylinux_2_36_x86_64 (target from lock)") {
		t.Errorf("target from the lock: exit %d\n%s", code, stderr)
	}
}

// TestShipPythonYARN: with no image or store, YARN (and client mode
// elsewhere) ships a site-packages archive built in the cache with
// spark.archives (a local file, which Spark uploads or serves itself);
// the driver here also gets the unpacked tree on its PYTHONPATH.
func TestShipPythonYARN(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	cache := filepath.Join(dir, "cache")
	t.Setenv("PYTHONPATH", "")
	app := filepath.Join(dir, "app.py")
	os.WriteFile(app, []byte("import six\n"), 0o644)
	r := rewriteJSON(t, append(append([]string{"rewrite", "-o", "json", "--cache", cache}, pyShipFlags(reqs)...), "--", "--master", "yarn", "--deploy-mode", "client", app))
	norm := shipNormalizer(cache, "$CACHE", dir, "$DIR")
	checkShipGolden(t, "yarn", r.Args, func(s string) string {
		return regexp.MustCompile(`archives/[0-9a-f]{64}`).ReplaceAllString(norm(s), "archives/KEY")
	})
	if norm(r.Env["PYTHONPATH"]) != "$CACHE/python/site-packages/KEY" {
		t.Errorf("env = %v", r.Env)
	}
	m, _ := filepath.Glob(filepath.Join(cache, "python", "archives", "*", "site-packages.tar.gz"))
	if len(m) != 1 {
		t.Fatalf("archives in the cache: %v", m)
	}
	names := tarNames(t, m[0])
	for _, want := range []string{"six/__init__.py", "fastmath/_c.cpython-311-x86_64-linux-gnu.so"} {
		if !slices.Contains(names, want) {
			t.Errorf("archive lacks %s: %v", want, names)
		}
	}
}

// tarNames lists a tar.gz's entries.
func tarNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// TestRewritePythonShipExec: rewrite --exec prints the driver's
// PYTHONPATH as a second export line, after $PYSPARK_SUBMIT_ARGS's; the
// program's .py file is checked for installs too.
func TestRewritePythonShipExec(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	t.Setenv("SPARK_HOME", "")
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	t.Setenv("PYTHONPATH", "")
	t.Setenv(submit.EnvPySparkSubmitArgs, "--master local[2] pyspark-shell")
	app := filepath.Join(dir, "nb.py")
	os.WriteFile(app, []byte("%pip install polars\n"), 0o644)
	cache := filepath.Join(dir, "cache")
	out, stderr, code := runCLI(t, append(append([]string{"rewrite", "--exec", "--cache", cache}, pyShipFlags(reqs)...), "--", "python3", app)...)
	if code != 0 {
		t.Fatalf("rewrite --exec: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "export PYSPARK_SUBMIT_ARGS=") || !strings.HasPrefix(lines[1], `export PYTHONPATH="`+cache+"/python/site-packages/") {
		t.Errorf("stdout:\n%s", out)
	}
	if want := app + ":1: it installs packages at run time (%pip)"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestShipPythonLockOnly: a lock with wheels, given without a Python
// input, still ships its wheels (the lock is the input).
func TestShipPythonLockOnly(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	t.Setenv("PYTHONPATH", "")
	cache := filepath.Join(dir, "cache")
	lockPath := filepath.Join(dir, "prebake.lock")
	if _, stderr, code := runCLI(t, append([]string{"resolve", "--cache", cache, "--lock", lockPath, "--packages", "org.slf4j:slf4j-api:2.0.7",
		"--no-default-repositories", "--repositories", "file://" + filepath.Join(repoRoot(t), "testdata/demo-repo") + "/"}, pyShipFlags(reqs)...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	app := filepath.Join(dir, "app.py")
	os.WriteFile(app, []byte("import six\n"), 0o644)
	r := rewriteJSON(t, []string{"rewrite", "-o", "json", "--cache", cache, "--lock", lockPath, "--frozen", "--no-default-repositories", "--repositories", "file://" + filepath.Join(repoRoot(t), "testdata/demo-repo") + "/",
		"--", "--master", "local[1]", "--packages", "org.slf4j:slf4j-api:2.0.7", app})
	if !strings.HasPrefix(r.Env["PYTHONPATH"], cache) {
		t.Errorf("env = %v, want the lock's wheels on PYTHONPATH", r.Env)
	}
}

// TestShipPythonLockOnlyStore: submit --store --frozen of a lock with
// wheels, with no Python input, ships them from the lock (the store's
// set has the archive) in cluster mode.
func TestShipPythonLockOnlyStore(t *testing.T) {
	_, reqs, dir := pyShipFixture(t)
	t.Chdir(dir)
	demo := "file://" + filepath.Join(repoRoot(t), "testdata/demo-repo") + "/"
	lockPath := filepath.Join(dir, "prebake.lock")
	if _, stderr, code := runCLI(t, append([]string{"resolve", "--cache", filepath.Join(dir, "cache"), "--lock", lockPath, "--packages", "org.slf4j:slf4j-api:2.0.7",
		"--no-default-repositories", "--repositories", demo}, pyShipFlags(reqs)...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	storeDir := filepath.Join(dir, "store")
	p, err := runPrepared(t, []string{"--store", "file://" + storeDir, "--lock", lockPath, "--frozen"}, []string{
		"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster", "--packages", "org.slf4j:slf4j-api:2.0.7",
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.0", "local:///opt/app/main.py"})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if joined := strings.Join(p.Sub.Args(), " "); !strings.Contains(joined, "#pydeps") || !strings.Contains(joined, "spark.executorEnv.PYTHONPATH=./pydeps") {
		t.Errorf("the lock's wheels are not shipped:\n%s", joined)
	}
}
