package cmd

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers/registrytest"
)

// bundleDemo resolves the demo packages from repo into a lock; it returns
// the resolution flags that match the lock.
func bundleDemo(t *testing.T, repo, cache, lock string) []string {
	t.Helper()
	flags := []string{"--no-default-repositories", "--repositories", repo, "--packages", "ch.qos.logback:logback-classic:1.4.11"}
	if code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "-q", "--lock", lock, "--cache", cache}, flags...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, errs)
	}
	return flags
}

// TestBundleCLI: export twice gives the same bytes; import fills a fresh
// cache and writes the lock; a changed jar byte is exit 65 naming the jar,
// with nothing imported; --to is required (64).
func TestBundleCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	repo := "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"
	lock := filepath.Join(tmp, "prebake.lock")
	bundleDemo(t, repo, filepath.Join(tmp, "c1"), lock)
	a, b := filepath.Join(tmp, "a.tar"), filepath.Join(tmp, "b.tar")
	for _, to := range []string{a, b} {
		if code, _, errs := runPrebake(context.Background(), "bundle", "export", "--lock", lock, "--cache", filepath.Join(tmp, "c1"), "--to", to); code != 0 {
			t.Fatalf("export: exit %d\n%s", code, errs)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if len(da) == 0 || string(da) != string(db) {
		t.Errorf("two exports differ (%d, %d bytes)", len(da), len(db))
	}
	far := filepath.Join(tmp, "far.lock")
	code, out, errs := runPrebake(context.Background(), "bundle", "import", a, "--cache", filepath.Join(tmp, "c2"), "--lock", far, "-o", "json")
	var js struct {
		Jars     int    `json:"jars"`
		LockHash string `json:"lockHash"`
		Lock     string `json:"lock"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errs)
	}
	src, _ := os.ReadFile(lock)
	got, _ := os.ReadFile(far)
	if diff := cmp.Diff(string(src), string(got)); diff != "" || js.Jars != 3 || js.Lock != far {
		t.Errorf("import %+v; lock (-exported +imported):\n%s", js, diff)
	}

	// One byte of the last jar flipped (the tar's last file ends 1024
	// bytes of end marker before the end, padded to 512).
	bad := append([]byte(nil), da...)
	i := strings.LastIndex(string(bad), "PK")
	bad[i+1] ^= 1
	badTar := filepath.Join(tmp, "bad.tar")
	os.WriteFile(badTar, bad, 0o644)
	cache3 := filepath.Join(tmp, "c3")
	code, _, errs = runPrebake(context.Background(), "bundle", "import", badTar, "--cache", cache3, "--lock", filepath.Join(tmp, "bad.lock"))
	if code != exitcode.DataErr || !strings.Contains(errs, "jars/") || !strings.Contains(errs, "checksum mismatch") {
		t.Errorf("tampered: exit %d (want 65)\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(tmp, "bad.lock")); err == nil {
		t.Error("a tampered bundle wrote its lock")
	}
	if es, _ := os.ReadDir(filepath.Join(cache3, "blobs", "sha256")); len(es) != 0 {
		t.Errorf("a tampered bundle wrote %d blobs", len(es))
	}
	for _, args := range [][]string{
		{"bundle", "export", "--lock", lock},
		// Not pushed to Docker Hub: a typo of FILE.tar has no registry host.
		{"bundle", "export", "--lock", lock, "--cache", filepath.Join(tmp, "c1"), "--to", "bundle.tgz"},
		{"bundle", "import", "bundle.tgz", "--cache", cache3},
		{"bundle", "import", "a", "b"},
	} {
		if code, _, errs := runPrebake(context.Background(), args...); code != exitcode.Usage {
			t.Errorf("%v: exit %d, want 64\n%s", args, code, errs)
		}
	}
	if code, _, errs := runPrebake(context.Background(), "bundle", "import", filepath.Join(tmp, "none.tar"), "--cache", cache3); code != exitcode.NotFound {
		t.Errorf("a missing bundle: exit %d, want 66\n%s", code, errs)
	}

	// A registry repository without a tag: the bundle export tagged with
	// the lock hash (not "latest"); only a latest tag is 66.
	reg := registrytest.InProcess(t) + "/team/bundles"
	if code, _, errs := runPrebake(context.Background(), "bundle", "export", "--lock", lock, "--cache", filepath.Join(tmp, "c1"), "--to", reg); code != 0 {
		t.Fatalf("export to a registry: exit %d\n%s", code, errs)
	}
	code, out, errs = runPrebake(context.Background(), "bundle", "import", reg, "--cache", filepath.Join(tmp, "c4"), "--lock", filepath.Join(tmp, "reg.lock"), "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.LockHash == "" {
		t.Fatalf("import without a tag: exit %d\n%s\n%s", code, out, errs)
	}
	latest := strings.Replace(reg, "/bundles", "/latest-only", 1)
	if code, _, errs := runPrebake(context.Background(), "bundle", "export", "--lock", lock, "--cache", filepath.Join(tmp, "c1"), "--to", latest+":latest"); code != 0 {
		t.Fatalf("export to :latest: exit %d\n%s", code, errs)
	}
	if code, _, errs := runPrebake(context.Background(), "bundle", "import", latest, "--cache", filepath.Join(tmp, "c5"), "--lock", filepath.Join(tmp, "latest.lock")); code != exitcode.NotFound || !strings.Contains(errs, "lock hash") {
		t.Errorf("only a latest tag: exit %d, want 66\n%s", code, errs)
	}
}

// TestBundleAirGapIT: a bundle exported where the repository (a real
// nginx) is reachable is imported into a fresh cache, a file:// store and
// through a real registry; bake image, bake s3 and submit --frozen then
// run with --offline and the repository gets 0 requests, in this network
// namespace and in one without a route (unshare -n); with nginx stopped
// (its directory no longer served) submit --frozen --offline still succeeds.
func TestBundleAirGapIT(t *testing.T) {
	root, tmp := isolatedCLI(t)
	ng := mavenhttp.StartNginx(t, filepath.Join(root, "testdata", "demo-repo"), "", "")
	const pw = "bundle-s3cret"
	host := startBakeRegistry(t, pw)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := runPrebake(context.Background(), args...)
		if code != 0 {
			t.Fatalf("prebake %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	near := filepath.Join(tmp, "near")
	lock := filepath.Join(near, "prebake.lock")
	flags := bundleDemo(t, ng.URL, filepath.Join(near, "cache"), lock)
	tarPath := filepath.Join(near, "jobs.bundle.tar")
	run("bundle", "export", "--lock", lock, "--cache", filepath.Join(near, "cache"), "--to", tarPath)
	pushed := strings.Fields(run("bundle", "export", "--lock", lock, "--cache", filepath.Join(near, "cache"), "--to", host+"/team/bundles", "--registry-auth", "prebake:"+pw))
	again := strings.Fields(run("bundle", "export", "--lock", lock, "--cache", filepath.Join(near, "cache"), "--to", host+"/team/bundles", "--registry-auth", "prebake:"+pw))
	if len(pushed) != 2 || cmp.Diff(pushed, again) != "" {
		t.Fatalf("two pushes: %v %v", pushed, again)
	}
	before := ng.Requests(t)
	if before == 0 {
		t.Fatal("the resolution made no request to nginx: the test proves nothing")
	}

	// The far side: a fresh cache, a store, the registry's copy.
	far := filepath.Join(tmp, "far")
	farLock := filepath.Join(far, "prebake.lock")
	cache := filepath.Join(far, "cache")
	store := "file://" + filepath.Join(far, "store")
	run("bundle", "import", tarPath, "--cache", cache, "--lock", farLock)
	run("bundle", "import", pushed[0], "--cache", filepath.Join(far, "cache-oci"), "--lock", filepath.Join(far, "oci.lock"), "--registry-auth", "prebake:"+pw)
	run("bundle", "import", tarPath, "--store", store, "--lock", filepath.Join(far, "store.lock"))

	run("bake", "image", "--offline", "--lock", farLock, "--cache", cache, "--base", "oci:"+filepath.Join(root, "testdata", "base-image")+":3.5.0-amd64",
		"--target", "oci:"+filepath.Join(far, "image"))
	run("bake", "image", "--offline", "--lock", filepath.Join(far, "oci.lock"), "--cache", filepath.Join(far, "cache-oci"),
		"--base", "oci:"+filepath.Join(root, "testdata", "base-image")+":3.5.0-amd64", "--target", "oci:"+filepath.Join(far, "image2"))
	// The store holds the set already: a hit, no jar needed.
	var s3 struct {
		Hit bool `json:"hit"`
	}
	if out := run("bake", "s3", "-o", "json", "--offline", "--lock", filepath.Join(far, "store.lock"), "--store", store, "--cache", filepath.Join(far, "empty")); json.Unmarshal([]byte(out), &s3) != nil || !s3.Hit {
		t.Errorf("bake s3 after a store import: %s", out)
	}
	bin, ran := fakeSparkSubmit(t, tmp)
	submit := append([]string{"submit", "--spark-submit", bin, "--frozen", "--offline", "--lock", farLock, "--cache", cache}, flags[:3]...)
	submit = append(submit, "--", "--master", "local[1]", "--packages", "ch.qos.logback:logback-classic:1.4.11", "app.jar")
	run(submit...)
	if data, err := os.ReadFile(ran); err != nil || !strings.Contains(string(data), "ch.qos.logback_logback-classic-1.4.11.jar") || strings.Contains(string(data), "--packages") {
		t.Errorf("spark-submit ran with %q (%v)", data, err)
	}
	if n := ng.Requests(t) - before; n != 0 {
		t.Errorf("the far side made %d requests to the repository", n)
	}
	// The far side in a network namespace of its own (unshare -n: only a
	// loopback, down; no route to nginx, which still runs out there).
	t.Run("netns", func(t *testing.T) {
		if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
			testenv.Skip(t, "unshare -n (a network namespace) is not permitted here: "+err.Error())
		}
		bin := testenv.Prebake(t)
		ns := filepath.Join(tmp, "netns")
		gap := func(args ...string) {
			t.Helper()
			c := exec.Command("unshare", append([]string{"-n", bin}, args...)...)
			c.Env = append(os.Environ(), "PREBAKE_CACHE="+filepath.Join(ns, "default-cache"))
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("unshare -n prebake %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		nsLock, nsCache := filepath.Join(ns, "prebake.lock"), filepath.Join(ns, "cache")
		gap("bundle", "import", tarPath, "--cache", nsCache, "--lock", nsLock)
		gap("bake", "image", "--offline", "--lock", nsLock, "--cache", nsCache, "--base", "oci:"+filepath.Join(root, "testdata", "base-image")+":3.5.0-amd64",
			"--target", "oci:"+filepath.Join(ns, "image"))
		sparkSubmit, ran2 := fakeSparkSubmit(t, ns)
		nsSubmit := append([]string{"submit", "--spark-submit", sparkSubmit, "--frozen", "--offline", "--lock", nsLock, "--cache", nsCache}, flags[:3]...)
		gap(append(nsSubmit, "--", "--master", "local[1]", "--packages", "ch.qos.logback:logback-classic:1.4.11", "app.jar")...)
		if _, err := os.Stat(ran2); err != nil {
			t.Errorf("spark-submit did not run in the network namespace: %v", err)
		}
		if n := ng.Requests(t) - before; n != 0 {
			t.Errorf("the network namespace made %d requests to the repository", n)
		}
		// The namespace really reaches no repository: resolving afresh
		// there is 69.
		c := exec.Command("unshare", append([]string{"-n", bin, "resolve", "--cache", filepath.Join(ns, "fresh")}, flags...)...)
		if out, err := c.CombinedOutput(); c.ProcessState == nil || c.ProcessState.ExitCode() != exitcode.Unavailable {
			t.Errorf("resolving in the namespace: %v (want exit 69)\n%s", err, out)
		}
	})
	// The repository stopped: its directory is no longer served (404), and nothing needs it.
	ng.Stop()
	os.Remove(ran)
	run(submit...)
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("spark-submit did not run with the repository stopped: %v", err)
	}
}

// TestLockStrictCLI: `resolve --frozen` on a lock with an unknown field,
// a bad hash or a path is 65 naming the field (a malformed inputsHash was
// 78, a stale lock, before).
func TestLockStrictCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	repo := "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"
	lock := filepath.Join(tmp, "prebake.lock")
	flags := bundleDemo(t, repo, filepath.Join(tmp, "cache"), lock)
	data, _ := os.ReadFile(lock)
	good := string(data)
	ih := good[strings.Index(good, `"inputsHash": "`)+15:][:64]
	for _, c := range []struct{ name, old, new, field string }{
		{"unknown field", `"version"`, `"signed": true, "version"`, `unknown field "signed"`},
		{"inputsHash not hex", ih, strings.Repeat("Z", 64), "inputs.inputsHash"},
		{"sha256 not hex", `"sha256": "`, `"sha256": "zz`, "sha256"},
		{"file escaping", `"file": "org.slf4j_slf4j-api-2.0.7.jar"`, `"file": "../slf4j.jar"`, "file"},
	} {
		bad := filepath.Join(tmp, "bad.lock")
		os.WriteFile(bad, []byte(strings.Replace(good, c.old, c.new, 1)), 0o644)
		code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "--frozen", "--offline", "--lock", bad, "--cache", filepath.Join(tmp, "cache")}, flags...)...)
		if code != exitcode.DataErr || !strings.Contains(errs, c.field) {
			t.Errorf("%s: exit %d (want 65 naming %s)\n%s", c.name, code, c.field, errs)
		}
	}
}

// TestBundleSignaturesCLI: a lock resolved with signatures verified is
// exported with its jars' signatures; imported into a fresh cache with the
// repository gone, resolve --verify-signatures --frozen --offline passes.
// A bundle of other jars (signed by an unpinned key) is refused with
// --verify-signatures naming the jar, and without it does not replace
// the existing lock (65, the difference printed) unless --force; a
// tampered jar or signature is refused.
func TestBundleSignaturesCLI(t *testing.T) {
	_, tmp := isolatedCLI(t)
	signer, stranger := pgptest.NewKey(t, "signer"), pgptest.NewKey(t, "stranger")
	keyring := filepath.Join(tmp, "keyring.asc")
	if err := os.WriteFile(keyring, signer.Public(t), 0o644); err != nil {
		t.Fatal(err)
	}
	both := filepath.Join(tmp, "both.asc")
	if err := os.WriteFile(both, append(signer.Public(t), stranger.Public(t)...), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := s3FileRepo(t)
	signRepo(t, repo, func(jar []byte) []byte { return signer.Sign(t, jar) })
	run := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := runCLI(t, args...)
		if code != want {
			t.Fatalf("prebake %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	near, nearCache := filepath.Join(tmp, "near.lock"), filepath.Join(tmp, "near-cache")
	resolveArgs := func(lock, cache, keys string, more ...string) []string {
		return append([]string{"resolve", "-q", "--verify-signatures", "--keyring", keys, "--no-default-repositories", "--repositories", repo,
			"--cache", cache, "--lock", lock, "com.example:lib-a:1.0"}, more...)
	}
	run(0, resolveArgs(near, nearCache, keyring)...)
	good := filepath.Join(tmp, "good.tar")
	run(0, "bundle", "export", "-q", "--lock", near, "--cache", nearCache, "--to", good)
	names := readTarNames(t, good)
	want := []string{"index.json", "prebake.lock", "sbom.cdx.json", "jars/com.example_lib-a-1.0.jar", "jars/com.example_lib-b-1.0.jar",
		"signatures/com.example_lib-a-1.0.jar.asc", "signatures/com.example_lib-b-1.0.jar.asc"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("bundle files (-want +got):\n%s", diff)
	}
	// An evil bundle: the same coordinates, lib-b's bytes changed, signed
	// by a key the far side did not pin.
	evilRepo := s3FileRepo(t)
	evilJar := filepath.Join(strings.TrimPrefix(evilRepo, "file://"), "com", "example", "lib-b", "1.0", "lib-b-1.0.jar")
	if err := os.WriteFile(evilJar, []byte("PK\x03\x04 evil"), 0o644); err != nil {
		t.Fatal(err)
	}
	signRepo(t, evilRepo, func(jar []byte) []byte {
		if strings.Contains(string(jar), "evil") {
			return stranger.Sign(t, jar)
		}
		return signer.Sign(t, jar)
	})
	evilLock, evilCache := filepath.Join(tmp, "evil.lock"), filepath.Join(tmp, "evil-cache")
	run(0, "resolve", "-q", "--verify-signatures", "--keyring", both, "--no-default-repositories", "--repositories", evilRepo,
		"--cache", evilCache, "--lock", evilLock, "com.example:lib-a:1.0")
	evil := filepath.Join(tmp, "evil.tar")
	run(0, "bundle", "export", "-q", "--lock", evilLock, "--cache", evilCache, "--to", evil)

	// The air gap: the repository is gone.
	root := strings.TrimPrefix(repo, "file://")
	if err := os.Rename(root, strings.TrimSuffix(root, "/")+".gone"); err != nil {
		t.Fatal(err)
	}
	far, farCache := filepath.Join(tmp, "far.lock"), filepath.Join(tmp, "far-cache")
	if out := run(0, "bundle", "import", good, "--cache", farCache, "--lock", far, "--verify-signatures", "--keyring", keyring); !strings.Contains(out, "2 jars, 2 signatures") {
		t.Errorf("import: %s", out)
	}
	run(0, resolveArgs(far, farCache, keyring, "--frozen", "--offline")...)
	// The same bundle again: the same lock, accepted.
	run(0, "bundle", "import", "-q", good, "--cache", farCache, "--lock", far)

	farData, _ := os.ReadFile(far)
	out := run(exitcode.DataErr, "bundle", "import", evil, "--cache", filepath.Join(tmp, "c-evil1"), "--lock", filepath.Join(tmp, "new.lock"), "--verify-signatures", "--keyring", keyring)
	if !strings.Contains(out, "com.example_lib-b-1.0.jar") || !strings.Contains(out, "not a pinned key") {
		t.Errorf("evil bundle, --verify-signatures: %s", out)
	}
	out = run(exitcode.DataErr, "bundle", "import", evil, "--cache", filepath.Join(tmp, "c-evil2"), "--lock", far)
	for _, w := range []string{"CONTENT CHANGED UNDER THE SAME VERSION", "com.example:lib-b", far + " was not replaced", "other bytes under the same version for com.example_lib-b-1.0.jar", "--force"} {
		if !strings.Contains(out, w) {
			t.Errorf("evil bundle over an existing lock: no %q in\n%s", w, out)
		}
	}
	if data, _ := os.ReadFile(far); string(data) != string(farData) {
		t.Error("the existing lock was replaced")
	}
	if n := count(t, filepath.Join(tmp, "c-evil2", "blobs", "sha256")); n != 0 {
		t.Errorf("a refused bundle wrote %d blobs", n)
	}
	out = run(0, "bundle", "import", evil, "--cache", filepath.Join(tmp, "c-evil3"), "--lock", far, "--force")
	if !strings.Contains(out, "warning: "+far+": replaced (--force)") || !strings.Contains(out, "CONTENT CHANGED") {
		t.Errorf("--force: %s", out)
	}

	// Tampered: a jar byte (65 naming the jar), a signature over other
	// bytes, index fixed (65 naming the jar with --verify-signatures).
	data, _ := os.ReadFile(good)
	bad := bytes.Clone(data)
	i := bytes.LastIndex(bad, []byte("PK\x03\x04 fake jar lib-b"))
	bad[i+10] ^= 1
	badTar := filepath.Join(tmp, "bad.tar")
	os.WriteFile(badTar, bad, 0o644)
	if out := run(exitcode.DataErr, "bundle", "import", badTar, "--cache", filepath.Join(tmp, "c-bad"), "--lock", filepath.Join(tmp, "bad.lock")); !strings.Contains(out, "jars/com.example_lib-b-1.0.jar") {
		t.Errorf("tampered jar: %s", out)
	}
	swapped := filepath.Join(tmp, "swapped.tar")
	rewriteTar(t, good, swapped, func(name string, data []byte) []byte {
		if name == "signatures/com.example_lib-b-1.0.jar.asc" {
			return signer.Sign(t, []byte("other bytes"))
		}
		return data
	})
	out = run(exitcode.DataErr, "bundle", "import", swapped, "--cache", filepath.Join(tmp, "c-swapped"), "--lock", filepath.Join(tmp, "swapped.lock"), "--verify-signatures", "--keyring", keyring)
	if !strings.Contains(out, "jar com.example_lib-b-1.0.jar") || !strings.Contains(out, "bad signature") {
		t.Errorf("a signature over other bytes: %s", out)
	}
}

func readTarNames(t *testing.T, path string) []string {
	t.Helper()
	names := []string{"index.json"}
	rewriteTar(t, path, "", func(name string, data []byte) []byte { names = append(names, name); return data })
	return names
}

// rewriteTar copies the tar at from to `to` ("": none), each file's bytes
// through edit, and fixes the index's sha256 and size of what changed.
func rewriteTar(t *testing.T, from, to string, edit func(name string, data []byte) []byte) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type file struct {
		hdr  *tar.Header
		data []byte
	}
	var files []file
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files = append(files, file{h, data})
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	index := string(files[0].data)
	for i := range files[1:] {
		fl := &files[i+1]
		was := fl.data
		fl.data = edit(fl.hdr.Name, bytes.Clone(was))
		if !bytes.Equal(was, fl.data) {
			index = strings.Replace(index, `"sha256": "`+sum(was)+`",
      "size": `+strconv.Itoa(len(was)), `"sha256": "`+sum(fl.data)+`",
      "size": `+strconv.Itoa(len(fl.data)), 1)
		}
	}
	files[0].data = []byte(index)
	if to == "" {
		return
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, fl := range files {
		fl.hdr.Size = int64(len(fl.data))
		if err := tw.WriteHeader(fl.hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(fl.data)
	}
	tw.Close()
	if err := os.WriteFile(to, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(es)
}
