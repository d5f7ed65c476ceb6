package cmd

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
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
}

// TestBundleAirGapIT: a bundle exported where the repository (a real
// nginx) is reachable is imported into a fresh cache, a file:// store and
// through a real registry; bake image, bake s3 and submit --frozen then
// run with --offline and the repository gets 0 requests, in this network
// namespace and in one without a route (unshare -n); with nginx stopped
// (its port closed) submit --frozen --offline still succeeds.
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
	// The repository stopped: its port is closed, and nothing needs it.
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
