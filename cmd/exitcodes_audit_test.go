package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/resolver"
)

// The security review's reproductions for the cache (finding 3) and the
// exit codes of its §9 that are not lock or POM validation: each command
// exits with the README's code, and a blob modified in the cache never
// leaves it.
func TestAuditExitCodesAndModifiedBlobs(t *testing.T) {
	root, _ := isolatedCLI(t)
	srv := mavenhttp.New(filepath.Join(root, "testdata", "demo-repo"))
	defer srv.Close()
	ctx := context.Background()
	const coord = "org.slf4j:slf4j-api:2.0.7"

	// setup resolves coord over HTTP into a fresh cache with a lock, and
	// returns the flags for it and the locked artifact.
	setup := func(t *testing.T) ([]string, resolver.Artifact, string) {
		dir := t.TempDir()
		cache, lock := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
		flags := []string{"--no-default-repositories", "--repositories", srv.URL(), "--cache", cache, "--lock", lock}
		if code, _, errs := runPrebake(ctx, append(append([]string{"resolve", "-q"}, flags...), coord)...); code != 0 {
			t.Fatalf("resolve: exit %d\n%s", code, errs)
		}
		l, err := resolver.ReadLock(lock)
		if err != nil {
			t.Fatal(err)
		}
		return flags, l.Artifacts[0], cache
	}
	tamper := func(t *testing.T, path string) {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644)
		if err := os.WriteFile(path, []byte(strings.Repeat("E", int(info.Size()))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hashOf := func(t *testing.T, path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}

	tests := []struct {
		name string
		// run returns the command; prep may change the cache first.
		prep  func(t *testing.T, a resolver.Artifact, cache string)
		args  func(flags []string, dir string) []string
		want  int
		msg   string
		after func(t *testing.T, a resolver.Artifact, cache, dir, stdout string)
	}{
		{"resolve with no coordinate", nil, func(flags []string, _ string) []string {
			return append([]string{"resolve"}, flags[:5]...)
		}, exitcode.Usage, "no coordinate", nil},
		{"resolve --packages with only a comma", nil, func(flags []string, _ string) []string {
			return append([]string{"resolve", "--packages", ","}, flags[:5]...)
		}, exitcode.Usage, "no coordinate", nil},
		{"locked blob missing with --offline: 69 as the repository cannot be asked", func(t *testing.T, a resolver.Artifact, cache string) {
			os.Remove(resolver.BlobPath(cache, a.Sha256))
		}, func(flags []string, _ string) []string {
			return append(append([]string{"resolve", "--offline"}, flags...), coord)
		}, exitcode.Unavailable, "not in the cache", nil},
		{"modified blob with --offline", func(t *testing.T, a resolver.Artifact, cache string) {
			tamper(t, resolver.BlobPath(cache, a.Sha256))
		}, func(flags []string, _ string) []string {
			return append(append([]string{"resolve", "--offline"}, flags...), coord)
		}, exitcode.DataErr, "run without --offline", nil},
		{"modified blob: bake image repairs it first", func(t *testing.T, a resolver.Artifact, cache string) {
			tamper(t, resolver.BlobPath(cache, a.Sha256))
		}, func(flags []string, dir string) []string {
			return append(append([]string{"bake", "image", "-q", "--base", "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0",
				"--target", "oci:" + filepath.Join(dir, "img")}, flags...), coord)
		}, 0, "", func(t *testing.T, a resolver.Artifact, cache, _, _ string) {
			if got := hashOf(t, resolver.BlobPath(cache, a.Sha256)); got != a.Sha256 {
				t.Errorf("blob hashes to %s after the bake, want it repaired (%s)", got, a.Sha256)
			}
		}},
		{"modified blob: bake s3 uploads the repaired one", func(t *testing.T, a resolver.Artifact, cache string) {
			tamper(t, resolver.BlobPath(cache, a.Sha256))
		}, func(flags []string, dir string) []string {
			return append(append([]string{"bake", "s3", "-q", "--store", "file://" + filepath.Join(dir, "store")}, flags...), coord)
		}, 0, "", func(t *testing.T, a resolver.Artifact, _, dir, _ string) {
			p := filepath.Join(dir, "store", "jars", "sha256", a.Sha256, a.File)
			if got := hashOf(t, p); got != a.Sha256 {
				t.Errorf("stored jar hashes to %s, want %s", got, a.Sha256)
			}
		}},
		{"modified retrieve file: rewrite rebuilds it", func(t *testing.T, a resolver.Artifact, cache string) {
			l := &resolver.Lockfile{Artifacts: []resolver.Artifact{a}}
			_, paths, err := resolver.Retrieve(context.Background(), l, cache)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(paths[0]) // replaced, the blob untouched
			if err := os.WriteFile(paths[0], []byte(strings.Repeat("X", int(a.Size))), 0o444); err != nil {
				t.Fatal(err)
			}
		}, func(flags []string, _ string) []string {
			return append(append([]string{"rewrite"}, flags...), "--", "--master", "local[1]", "--packages", coord, "app.jar")
		}, 0, "", func(t *testing.T, a resolver.Artifact, _, _, stdout string) {
			for _, w := range strings.Fields(stdout) {
				for _, p := range strings.Split(strings.Trim(w, "'"), ",") {
					if strings.HasSuffix(p, a.File) {
						if got := hashOf(t, strings.TrimPrefix(p, "file:")); got != a.Sha256 {
							t.Errorf("rewrite's %s hashes to %s, want %s", p, got, a.Sha256)
						}
						return
					}
				}
			}
			t.Errorf("no path to %s in %s", a.File, stdout)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flags, a, cache := setup(t)
			if tc.prep != nil {
				tc.prep(t, a, cache)
			}
			dir := t.TempDir()
			code, stdout, stderr := runPrebake(ctx, tc.args(flags, dir)...)
			if code != tc.want || !strings.Contains(stderr, tc.msg) {
				t.Fatalf("exit %d, want %d with %q in stderr\nstdout: %s\nstderr: %s", code, tc.want, tc.msg, stdout, stderr)
			}
			if tc.after != nil {
				tc.after(t, a, cache, dir, stdout)
			}
		})
	}
}
