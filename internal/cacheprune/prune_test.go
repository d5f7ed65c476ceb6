//go:build unix

package cacheprune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
)

// nobody is the other user of the shared caches below.
const nobody = 65534

// needRoot skips a test that needs two real uids unless it runs as root
// (CI runs the unit tier as root).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: files of another uid (uid 65534) are planted in the cache (CI runs as root)")
	}
}

// baseDir is a directory every user may traverse (t.TempDir is 0700).
func baseDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "cacheprune-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// asNobody runs a command as uid 65534 (setpriv), as another user of the
// machine plants things.
func asNobody(t *testing.T, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to act as uid 65534")
	}
	c := exec.Command("setpriv", append([]string{"--reuid", fmt.Sprint(nobody), "--regid", fmt.Sprint(nobody), "--clear-groups", "--"}, args...)...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v: %v\n%s", args, err, out)
	}
}

// write writes files (path: content) under dir, making their directories
// (mode dirMode), with their times set to mtime.
func write(t *testing.T, dir string, dirMode os.FileMode, mtime time.Time, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), dirMode); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// tree lists what is under dir ("name" for a file, "name/" for a
// directory, "name -> target" for a link).
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			rel += " -> " + target
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// stickyDir makes p, mode 1777 (a directory root made for a team).
func stickyDir(t *testing.T, p string) string {
	t.Helper()
	if err := os.Mkdir(p, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return p
}

// teamCache is root's team cache base/prr (1777: for root, the cache is
// the directory itself), holding an old jar that a refused prune must
// leave.
func teamCache(t *testing.T, base string) string {
	t.Helper()
	prr := stickyDir(t, filepath.Join(base, "prr"))
	write(t, prr, 0o755, sixtyDaysAgo, map[string]string{"blobs/sha256/" + blobA: "old jar"})
	return prr
}

var (
	sixtyDaysAgo = time.Now().Add(-60 * 24 * time.Hour)
	blobA        = strings.Repeat("a", 64)
)

// TestPruneRefusesPlantedLinks reproduces audit 4, H1: prune listed and
// removed through symbolic links another user planted in the cache, and
// deleted what they point to, outside the cache. It now checks every
// directory it enters as every other command does (cachedir.Check) and
// refuses with the same error (errdefs.CantWrite: exit 73) before it
// removes anything.
func TestPruneRefusesPlantedLinks(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name string
		// setup makes the cache, plants in it as uid 65534, and returns
		// it and the directory it must refuse.
		setup func(t *testing.T, base, outside string) (cache, refused string)
		want  string
	}{{
		// (a) The documented shared layout: root's cache is the 1777
		// directory itself; nobody links rewrite to a root-only directory.
		name: "rewrite link in root's 1777 cache",
		setup: func(t *testing.T, base, outside string) (string, string) {
			prr := teamCache(t, base)
			asNobody(t, "ln", "-s", outside, filepath.Join(prr, "rewrite"))
			return prr, filepath.Join(prr, "rewrite")
		},
		want: "a symbolic link owned by uid 65534 (nobody), not by you",
	}, {
		// A link planted inside retrieve/ of the same cache, retrieve
		// being nobody's.
		name: "retrieve of another user",
		setup: func(t *testing.T, base, outside string) (string, string) {
			prr := teamCache(t, base)
			asNobody(t, "mkdir", "-m", "0755", filepath.Join(prr, "retrieve"))
			asNobody(t, "ln", "-s", outside, filepath.Join(prr, "retrieve", "3ca88651"))
			return prr, filepath.Join(prr, "retrieve")
		},
		want: "a directory owned by uid 65534 (nobody), not by you",
	}, {
		// (b) A cache directory nobody owns, its retrieve and blobs links
		// to another user's files.
		name: "cache of another user with retrieve and blobs links",
		setup: func(t *testing.T, base, outside string) (string, string) {
			shared := filepath.Join(stickyDir(t, filepath.Join(base, "pr")), "shared")
			asNobody(t, "mkdir", "-m", "0777", shared)
			asNobody(t, "ln", "-s", outside, filepath.Join(shared, "retrieve"))
			asNobody(t, "ln", "-s", outside, filepath.Join(shared, "blobs"))
			return shared, shared
		},
		want: "a directory owned by uid 65534 (nobody), not by you",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			base := baseDir(t)
			outside := filepath.Join(base, "rootdata")
			write(t, outside, 0o700, time.Now().Add(-90*24*time.Hour), map[string]string{
				"etc-like/config.conf": "important", "sha256/holiday.jpg": "photo", "sub/deep.txt": "deep",
			})
			os.Chmod(outside, 0o700)
			cache, refused := tc.setup(t, base, outside)
			before, beforeCache := tree(t, outside), tree(t, cache)
			for _, dry := range []bool{true, false} {
				rep, err := Prune(cache, Options{OlderThan: 30 * 24 * time.Hour, DryRun: dry, Now: time.Now().Add(365 * 24 * time.Hour)})
				var ue *cachedir.UnsafeError
				if err == nil || !errors.As(err, &ue) || !errors.Is(err, errdefs.CantWrite) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Prune (dry run %v) = %+v, %v; want an *UnsafeError (CantWrite) with %q", dry, rep, err, tc.want)
				}
				// The same message as the other commands: cachedir.Check's.
				if cerr := cachedir.Check(refused); cerr == nil || cerr.Error() != err.Error() {
					t.Errorf("Prune: %v\nCheck(%s): %v", err, refused, cerr)
				}
			}
			if diff := cmp.Diff(before, tree(t, outside)); diff != "" {
				t.Errorf("outside the cache (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeCache, tree(t, cache)); diff != "" {
				t.Errorf("a refused prune removed from the cache (-before +after):\n%s", diff)
			}
		})
	}
}

// TestPruneFollowsNoLink: in a cache prune may enter (root's, open to
// others without the sticky bit: only a warning, as for every command),
// links another user planted in retrieve/, rewrite/, blobs/, index/,
// locks/ and tmp/ are removed themselves or skipped, never followed; a
// cache directory that is a link of root's own is skipped, not followed.
func TestPruneFollowsNoLink(t *testing.T) {
	needRoot(t)
	base := baseDir(t)
	outside := filepath.Join(base, "outside")
	write(t, outside, 0o755, sixtyDaysAgo, map[string]string{
		"dir/config.conf": "important", "file.txt": "important", "lock.lock": "", "blobs/sha256/" + blobA: "kept",
	})
	ed := filepath.Join(base, "ed") // an emptyDir: root's, 0777, not sticky
	os.Mkdir(ed, 0o777)
	os.Chmod(ed, 0o777)
	for _, d := range []string{"retrieve", "rewrite", "blobs/sha256", "index/ab", "locks/cd", "tmp"} {
		if err := os.MkdirAll(filepath.Join(ed, d), 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(ed, d), 0o777)
	}
	write(t, ed, 0o777, sixtyDaysAgo, map[string]string{"retrieve/real/a.jar": "jar", "blobs/sha256/" + strings.Repeat("b", 64): "old jar"})
	os.Chmod(filepath.Join(ed, "retrieve", "real"), 0o777)
	for _, l := range [][2]string{
		{"retrieve/3ca88651", filepath.Join(outside, "dir")},
		{"retrieve/real/evil.jar", filepath.Join(outside, "file.txt")},
		{"rewrite/p.properties", filepath.Join(outside, "file.txt")},
		{"blobs/sha256/" + strings.Repeat("c", 64), filepath.Join(outside, "file.txt")},
		{"index/ab/ab01", filepath.Join(outside, "file.txt")},
		{"locks/cd/cd02.lock", filepath.Join(outside, "lock.lock")},
		{"tmp/dl-1", filepath.Join(outside, "file.txt")},
	} {
		asNobody(t, "ln", "-s", l[1], filepath.Join(ed, l[0]))
	}
	var warnings []string
	rep, err := Prune(ed, Options{OlderThan: 30 * 24 * time.Hour, Now: time.Now().Add(365 * 24 * time.Hour),
		Warnf: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) == 0 || !strings.Contains(strings.Join(warnings, "\n"), "cache directory "+ed+" is writable by group and others and not sticky") {
		t.Errorf("warnings: %q, want the open directories'", warnings)
	}
	if diff := cmp.Diff([]string{"blobs/", "blobs/sha256/", "blobs/sha256/" + blobA, "dir/", "dir/config.conf", "file.txt", "lock.lock"}, tree(t, outside)); diff != "" {
		t.Errorf("outside the cache (-want +got):\n%s", diff)
	}
	// The links in retrieve/ and rewrite/ went (themselves), the blob link
	// and the link in index/, locks/ and tmp/ are not regular files: left.
	want := []string{"blobs/", "blobs/sha256/", "blobs/sha256/" + strings.Repeat("c", 64) + " -> " + filepath.Join(outside, "file.txt"),
		"index/", "index/ab/", "index/ab/ab01 -> " + filepath.Join(outside, "file.txt"),
		"locks/", "locks/cd/", "locks/cd/cd02.lock -> " + filepath.Join(outside, "lock.lock"),
		"retrieve/", "rewrite/", "tmp/", "tmp/dl-1 -> " + filepath.Join(outside, "file.txt")}
	if diff := cmp.Diff(want, tree(t, ed)); diff != "" {
		t.Errorf("the cache after prune (-want +got):\n%s", diff)
	}
	if rep.Blobs != 1 || rep.Retrieve != 2 || rep.Rewrite != 1 {
		t.Errorf("report: %+v", rep)
	}

	// A cache directory that is root's own link: skipped, not followed.
	own := filepath.Join(base, "own")
	write(t, own, 0o755, sixtyDaysAgo, map[string]string{"layers/k.json": `{"digest":"sha256:` + blobA + `"}`})
	if err := os.Symlink(filepath.Join(outside, "blobs"), filepath.Join(own, "blobs")); err != nil {
		t.Fatal(err)
	}
	warnings = nil
	rep, err = Prune(own, Options{MaxSize: 1, Warnf: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "blobs", "sha256", blobA)); err != nil || rep.Layers != 1 || rep.Blobs != 0 {
		t.Errorf("a linked blobs/: %+v, %v", rep, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "blobs is a symbolic link: not pruned") {
		t.Errorf("warnings: %q", warnings)
	}
}

// TestPruneKeepsRecentRetrieve reproduces audit 4, L3: --max-size removed
// the retrieve directory a rewrite had printed seconds before. Retrieve
// directories and edited copies of the last hour are kept from the size
// limit (not from the age limit), the oldest of the rest go.
func TestPruneKeepsRecentRetrieve(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	write(t, cache, 0o755, now.Add(-2*time.Hour), map[string]string{"retrieve/old/a.jar": "old jar", "rewrite/old.properties": "x=1"})
	write(t, cache, 0o755, now.Add(-time.Minute), map[string]string{"retrieve/new/a.jar": "new jar", "rewrite/new.properties": "x=2"})
	for _, d := range []string{"old", "new"} {
		at := now.Add(-2 * time.Hour)
		if d == "new" {
			at = now.Add(-time.Minute)
		}
		os.Chtimes(filepath.Join(cache, "retrieve", d), at, at)
	}
	rep, err := Prune(cache, Options{MaxSize: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"retrieve/", "retrieve/new/", "retrieve/new/a.jar", "rewrite/", "rewrite/new.properties"}, tree(t, cache)); diff != "" {
		t.Errorf("after --max-size 1 (-want +got):\n%s", diff)
	}
	if rep.Retrieve != 1 || rep.Rewrite != 1 || rep.BytesKept != int64(len("new jar")+len("x=2")) {
		t.Errorf("report: %+v", rep)
	}
	// The age limit still applies to them.
	if rep, err = Prune(cache, Options{OlderThan: time.Second, Now: now}); err != nil || rep.Retrieve != 1 || rep.Rewrite != 1 {
		t.Errorf("--older-than 1s: %+v, %v", rep, err)
	}
}

// TestPruneKeepsBakeTempFiles: --max-size removed a running bake's temp
// file in layers/blobs/sha256 (.tmp-*) as if it were a layer no key
// names. Names starting with "." are never entries.
func TestPruneKeepsBakeTempFiles(t *testing.T) {
	cache := t.TempDir()
	write(t, cache, 0o755, sixtyDaysAgo, map[string]string{
		"layers/blobs/sha256/.tmp-123": "half a layer",
		"layers/blobs/sha256/" + blobA: "orphan layer",
	})
	rep, err := Prune(cache, Options{MaxSize: 1, OlderThan: time.Hour, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"layers/", "layers/blobs/", "layers/blobs/sha256/", "layers/blobs/sha256/.tmp-123"}, tree(t, cache)); diff != "" {
		t.Errorf("after --max-size 1 (-want +got):\n%s", diff)
	}
	if rep.Layers != 1 {
		t.Errorf("report: %+v", rep)
	}
}
