package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestLockSurvivesMirror reproduces finding 8 of review 3: a lock made
// against one chain was stale (78) with --frozen against a mirror of it
// (another URL, a trailing slash, DEFAULT_ARTIFACT_REPOSITORY), though
// every jar's sha256 was the same. Only the repositories changed, so a
// frozen lock is used by content, with a notice; a mirror that serves
// other bytes fails the sha256 check. Not frozen, the lock is resolved
// again and rewritten, and stderr says so (finding 15).
func TestLockSurvivesMirror(t *testing.T) {
	root, tmp := isolatedCLI(t)
	demo := filepath.Join(root, "testdata", "demo-repo")
	mirror := filepath.Join(tmp, "mirror")
	if out, err := exec.Command("cp", "-r", demo, mirror).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	lock := filepath.Join(tmp, "prebake.lock")
	pkgs := []string{"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:1.7.36"}
	resolve := func(repo, cache string, extra ...string) (int, string) {
		args := append([]string{"resolve", "-o", "names", "--lock", lock, "--no-default-repositories", "--repositories", repo, "--cache", cache}, extra...)
		code, _, errs := runPrebake(context.Background(), append(args, pkgs...)...)
		return code, errs
	}
	if code, errs := resolve("file://"+demo+"/", filepath.Join(tmp, "laptop-cache")); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, errs)
	}
	before, _ := os.ReadFile(lock)
	for _, tt := range []struct {
		name, repo string
		extra      []string
	}{
		{"the mirror in CI, --frozen", "file://" + mirror + "/", []string{"--frozen"}},
		{"no trailing slash, --frozen", "file://" + mirror, []string{"--frozen"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, errs := resolve(tt.repo, filepath.Join(t.TempDir(), "ci-cache"), tt.extra...)
			if code != 0 || !strings.Contains(errs, "only the repositories changed") || !strings.Contains(errs, "sha256") {
				t.Errorf("exit %d, want 0 and a notice\n%s", code, errs)
			}
			if after, _ := os.ReadFile(lock); !bytes.Equal(before, after) {
				t.Errorf("the lock was rewritten")
			}
		})
	}
	// A mirror that serves other bytes for a locked jar: --frozen is
	// strict on content.
	jar := filepath.Join(mirror, "org", "slf4j", "slf4j-api", "2.0.7", "slf4j-api-2.0.7.jar")
	good, err := os.ReadFile(jar)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jar, []byte("not the locked jar"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, errs := resolve("file://"+mirror+"/", filepath.Join(tmp, "ci-cache-2"), "--frozen")
	if code != exitcode.DataErr || !strings.Contains(errs, "sha256") || !strings.Contains(errs, "slf4j-api-2.0.7.jar") {
		t.Errorf("tampered mirror: exit %d, want 65 naming the jar and its sha256\n%s", code, errs)
	}
	if err := os.WriteFile(jar, good, 0o644); err != nil {
		t.Fatal(err)
	}
	// Not frozen: resolved again against the mirror, and said.
	code, errs = resolve("file://"+mirror+"/", filepath.Join(tmp, "ci-cache-1"))
	if after, _ := os.ReadFile(lock); code != 0 || bytes.Equal(before, after) || !strings.Contains(errs, "rewritten") {
		t.Errorf("not frozen: exit %d, the lock rewritten: %v; want a line saying so\n%s", code, !bytes.Equal(before, after), errs)
	}
	// Other packages are still a stale lock with --frozen.
	code, _, errs = runPrebake(context.Background(), "resolve", "--frozen", "--lock", lock, "--no-default-repositories", "--repositories", "file://"+demo+"/",
		"--cache", filepath.Join(tmp, "laptop-cache"), "org.slf4j:slf4j-api:2.0.7")
	if code != exitcode.StaleLock || !strings.Contains(errs, "packages changed") {
		t.Errorf("other packages, --frozen: exit %d, want 78\n%s", code, errs)
	}
}

// TestStaleLockRewriteSaysSo reproduces finding 15 of review 3: `prebake
// rewrite --lock prebake.lock -- … --packages <other version> app.py`
// rewrote the lock without a line on stderr, and submit did the same.
func TestStaleLockRewriteSaysSo(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	bin, _ := fakeSparkSubmit(t, tmp)
	repo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	if code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "-q", "--lock", "prebake.lock", "org.slf4j:slf4j-api:2.0.7"}, repo...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, errs)
	}
	for _, tt := range []struct {
		name string
		args []string
		pkg  string
	}{
		{"rewrite", []string{"rewrite"}, "org.slf4j:slf4j-api:1.7.36"},
		{"submit", []string{"submit", "--spark-submit", bin}, "org.slf4j:slf4j-api:2.0.7"},
	} {
		before, _ := os.ReadFile("prebake.lock")
		args := append(append(append([]string{}, tt.args...), "--lock", "prebake.lock"), repo...)
		args = append(args, "--", "--master", "local[2]", "--packages", tt.pkg, "app.py")
		code, _, errs := runPrebake(context.Background(), args...)
		after, _ := os.ReadFile("prebake.lock")
		if code != 0 || bytes.Equal(before, after) {
			t.Fatalf("%s: exit %d, lock rewritten %v\n%s", tt.name, code, !bytes.Equal(before, after), errs)
		}
		if !strings.Contains(errs, "lockfile prebake.lock was stale (packages changed from") || !strings.Contains(errs, "rewritten") {
			t.Errorf("%s rewrote the stale lock without saying so:\n%s", tt.name, errs)
		}
	}
}
