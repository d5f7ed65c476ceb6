package cmd

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/lock"

	"github.com/prebake/prebake/internal/cacheprune"
	"github.com/prebake/prebake/internal/exitcode"
)

// TestCachePrune reproduces finding 11 of review 3: bakes of one lock with
// other layer settings filled the cache with jar blobs and layer tars, and
// nothing pruned it (gc works on stores only). `prebake cache prune`
// removes what was not used for --older-than, the oldest until
// --max-size, never a jar a kept lock names, and the download-lock files.
func TestCachePrune(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	cache := filepath.Join(tmp, "cache")
	repo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", cache}
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0"
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := runPrebake(context.Background(), args...)
		if code != 0 {
			t.Fatalf("prebake %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	run(append([]string{"resolve", "-q", "--lock", "old.lock", "org.slf4j:slf4j-api:1.7.36"}, repo...)...)
	run(append([]string{"resolve", "-q", "--lock", "prebake.lock", "ch.qos.logback:logback-classic:1.4.11"}, repo...)...)
	// Three bakes of one lock, as the walkthrough did: three layer sets.
	for i, extra := range [][]string{nil, {"--layers", "2"}, {"--compression", "none"}} {
		run(append([]string{"bake", "image", "-q", "--base", base, "--target", "oci:" + filepath.Join(tmp, "image") + ":" + string(rune('a'+i)), "--lock", "prebake.lock", "--cache", cache}, extra...)...)
	}
	layers, _ := filepath.Glob(filepath.Join(cache, "layers", "*.json"))
	if len(layers) < 3 {
		t.Fatalf("layer keys after three bakes: %v", layers)
	}
	// Age everything by 60 days but the lock files of one URL.
	old := time.Now().Add(-60 * 24 * time.Hour)
	_ = filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
	// file:// repositories take no download lock: write what an http one
	// leaves (a lock and a 404 record, and the index entry of old.lock's
	// jar), and hold one lock as a running prebake would.
	ol, err := lock.Read("old.lock")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"locks/ab/ab01.lock": "", "locks/ab/ab01.404": "1700000000000000000", "locks/cd/cd02.lock": "",
		"index/ef/ef03": ol.Artifacts[0].Sha256 + " 1 https://repo.example/x.jar\n", "tmp/dl-1234": "partial",
	} {
		p := filepath.Join(cache, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Chtimes(p, old, old)
	}
	heldLock, err := os.OpenFile(filepath.Join(cache, "locks/cd/cd02.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer heldLock.Close()
	if err := syscall.Flock(int(heldLock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// Dry run: nothing removed.
	var rep cacheprune.Report
	out := run("cache", "prune", "--cache", cache, "--older-than", "30d", "--dry-run", "-o", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Layers < 3 || !rep.DryRun {
		t.Fatalf("dry run: %s (%v)", out, err)
	}
	if now, _ := filepath.Glob(filepath.Join(cache, "layers", "*.json")); len(now) != len(layers) {
		t.Errorf("dry run removed layers")
	}
	// ./prebake.lock is kept by default: its 3 jars stay, old.lock's goes.
	out = run("cache", "prune", "--cache", cache, "--older-than", "30d", "-o", "json")
	rep = cacheprune.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Layers < 3 || rep.Blobs < 1 || rep.KeptByLocks != 3 || rep.LockFiles != 2 || rep.IndexFiles != 1 || rep.TempFiles != 1 {
		t.Errorf("prune: %s (%v)", out, err)
	}
	blobs, _ := filepath.Glob(filepath.Join(cache, "blobs", "sha256", "*"))
	if len(blobs) != 3 {
		t.Errorf("blobs left: %d, want the kept lock's 3", len(blobs))
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "layers", "blobs", "sha256", "*")); len(left) != 0 {
		t.Errorf("layer blobs left: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "locks", "*", "*")); len(left) != 1 || filepath.Base(left[0]) != "cd02.lock" {
		t.Errorf("download-lock files left: %v, want only the held one", left)
	}
	// The kept lock still resolves from the cache, offline.
	run(append([]string{"resolve", "-q", "--offline", "--frozen", "--lock", "prebake.lock", "ch.qos.logback:logback-classic:1.4.11"}, repo...)...)
	// --max-size: with no lock kept, the oldest go until the cache fits.
	out = run("cache", "prune", "--cache", cache, "--max-size", "1B", "--keep-lock", "old.lock")
	if !strings.Contains(out, "removed 3 jars") {
		t.Errorf("--max-size 1B: %s", out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"cache", "prune", "--cache", cache}, "--older-than AGE or --max-size SIZE"},
		{[]string{"cache", "prune", "--cache", cache, "--max-size", "lots"}, `--max-size "lots"`},
	} {
		if code, _, errs := runPrebake(context.Background(), tt.args...); code != exitcode.Usage || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d %s", tt.args, code, errs)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 0, false}, {"1048576", 1 << 20, false}, {"5GB", 5e9, false}, {"500mb", 5e8, false}, {"2GiB", 2 << 30, false},
		{"1.5G", 3 << 29, false}, {"lots", 0, true}, {"-1", 0, true}, {"0", 0, true}, {"1e30", 0, true},
	} {
		got, err := parseSize(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (error: %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// TestCachePruneRefusesPlantedLinks reproduces audit 4, H1 with the CLI:
// in root's 1777 team cache, uid 65534 linked rewrite/ to a root-only
// directory, and `cache prune --older-than 30d` deleted what was in it
// (exit 0); in a cache directory uid 65534 owns, its retrieve and blobs
// links made prune delete another user's files, where resolve refused
// (73). prune now refuses both with the error and code (73) of the
// commands that use those directories, and removes nothing.
func TestCachePruneRefusesPlantedLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: uid 65534 plants links in the cache (CI runs as root)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to act as uid 65534")
	}
	root, _ := isolatedCLI(t)
	base, err := os.MkdirTemp("", "prune-h1-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	asNobody := func(args ...string) {
		t.Helper()
		out, err := exec.Command("setpriv", append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", "--"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("as nobody %v: %v\n%s", args, err, out)
		}
	}
	mkdir := func(p string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(p, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	// Root-only data, 90 days old, outside every cache.
	rootdata := filepath.Join(base, "rootdata")
	mkdir(filepath.Join(rootdata, "etc-like"), 0o700)
	os.Chmod(rootdata, 0o700)
	conf := filepath.Join(rootdata, "etc-like", "config.conf")
	if err := os.WriteFile(conf, []byte("important\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-90 * 24 * time.Hour)
	for _, p := range []string{conf, filepath.Join(rootdata, "etc-like")} {
		os.Chtimes(p, old, old)
	}
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"}

	// (a) root's 1777 cache: resolve is fine (it uses no rewrite/), rewrite
	// and prune refuse the link.
	prr := filepath.Join(base, "prr")
	mkdir(prr, 0o777|os.ModeSticky)
	asNobody("ln", "-s", rootdata, filepath.Join(prr, "rewrite"))
	if code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "-q", "--cache", prr, "-o", "names", "org.slf4j:slf4j-api:2.0.7"}, demo...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, errs)
	}
	want := "unsafe cache directory " + filepath.Join(prr, "rewrite") + ": a symbolic link owned by uid 65534 (nobody), not by you"
	// rewrite writes an edited copy of a properties file into rewrite/.
	props := filepath.Join(base, "job.properties")
	if err := os.WriteFile(props, []byte("spark.jars.packages=org.slf4j:slf4j-api:2.0.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runPrebake(context.Background(), append([]string{"rewrite", "-q", "--cache", prr}, append(demo, "--", "--master", "local[1]", "--properties-file", props, "app.jar")...)...)
	if code != exitcode.CantCreate || !strings.Contains(errs, want) {
		t.Errorf("rewrite in root's team cache with nobody's rewrite link: exit %d\n%s", code, errs)
	}
	for _, dry := range []string{"--dry-run", "-q"} {
		code, out, errs := runPrebake(context.Background(), "cache", "prune", "--older-than", "30d", "--cache", prr, dry, "-o", "json")
		if code != exitcode.CantCreate || !strings.Contains(errs, want) {
			t.Errorf("cache prune %s in root's team cache: exit %d, want %d with %q\n%s%s", dry, code, exitcode.CantCreate, want, out, errs)
		}
	}
	if data, err := os.ReadFile(conf); err != nil || string(data) != "important\n" {
		t.Errorf("root's data outside the cache: %q, %v", data, err)
	}

	// (b) a cache directory nobody owns, its retrieve and blobs linked to
	// another user's (daemon's) files: resolve and prune refuse it alike.
	pr := filepath.Join(base, "pr")
	mkdir(pr, 0o777|os.ModeSticky)
	victim := filepath.Join(pr, "victim")
	mkdir(filepath.Join(victim, "reports", "sub"), 0o755)
	mkdir(filepath.Join(victim, "blobsdir", "sha256"), 0o755)
	files := []string{filepath.Join(victim, "reports", "q1.txt"), filepath.Join(victim, "reports", "sub", "deep.txt"), filepath.Join(victim, "blobsdir", "sha256", "holiday.jpg")}
	for _, f := range files {
		if err := os.WriteFile(f, []byte("daemon's"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(f, old, old)
	}
	filepath.WalkDir(victim, func(p string, _ os.DirEntry, _ error) error { return os.Lchown(p, 1, 1) })
	shared := filepath.Join(pr, "shared")
	asNobody("mkdir", "-m", "0777", shared)
	asNobody("ln", "-s", filepath.Join(victim, "reports"), filepath.Join(shared, "retrieve"))
	asNobody("ln", "-s", filepath.Join(victim, "blobsdir"), filepath.Join(shared, "blobs"))
	want = "unsafe cache directory " + shared + ": a directory owned by uid 65534 (nobody), not by you"
	code, _, errs = runPrebake(context.Background(), append([]string{"resolve", "-q", "--cache", shared, "-o", "names", "org.slf4j:slf4j-api:2.0.7"}, demo...)...)
	if code != exitcode.CantCreate || !strings.Contains(errs, want) {
		t.Errorf("resolve in nobody's cache: exit %d\n%s", code, errs)
	}
	code, out, errs := runPrebake(context.Background(), "cache", "prune", "--older-than", "1d", "--cache", shared, "-o", "json")
	if code != exitcode.CantCreate || !strings.Contains(errs, want) {
		t.Errorf("cache prune in nobody's cache: exit %d, want %d with %q\n%s%s", code, exitcode.CantCreate, want, out, errs)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("daemon's file outside the cache: %v", err)
		}
	}
}
