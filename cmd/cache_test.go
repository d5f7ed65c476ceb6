package cmd

import (
	"context"
	"encoding/json"
	"os"
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
