package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// hostileFiles are the local files of the third review's N10, by name: a
// FIFO (no writer: reading it blocks forever), /dev/zero (endless), a
// directory, and a missing file; each path is a fresh one.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo1")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big") // sparse, over every cap (16 MiB at most)
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 17<<20); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"fifo": fifo, "/dev/zero": "/dev/zero", "directory": sub, "missing": filepath.Join(dir, "missing"), "too large": big}
}

// TestAuditLocalFiles is the review's N10: every local file prebake reads
// (pod templates, token and CA files, kubeconfig, Maven settings, locks,
// prebake.yaml, properties files, --manifest, set files) must be a regular
// file under its cap. A FIFO, /dev/zero, a directory or a file over the
// cap is 65 naming the file, a missing one 66, at once: no hang, no
// out-of-memory.
func TestAuditLocalFiles(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", tmp) // no ~/.kube/config
	t.Setenv("SPARK_CONF_DIR", "")
	t.Setenv("SPARK_HOME", "")
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	const coord = "org.slf4j:slf4j-api:2.0.7"
	k8sDry := func(key string) func(string) []string {
		return func(f string) []string {
			return []string{"submit", "--dry-run", "-o", "yaml", "--spark-version", "3.5.9", "--", "--master", "k8s://https://127.0.0.1:1",
				"--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image=apache/spark:3.5.9", "--conf", key + "=" + f, "--class", "M", "local:///a.jar"}
		}
	}
	k8sStatus := func(key string) func(string) []string {
		return func(f string) []string {
			return []string{"status", "ns:app-driver", "--master", "k8s://http://127.0.0.1:1", "--conf", key + "=" + f}
		}
	}
	lockFile := filepath.Join(tmp, "prebake.lock")
	if code, _, errs := runPrebake(context.Background(), append(append([]string{"resolve", "-q", "--lock", lockFile}, demo...), coord)...); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	tests := []struct {
		name string
		args func(f string) []string
		env  string // set to the file instead of an argument
		// missing is the code for a missing file (0: not a case, a
		// missing lock is one to write).
		missing int
	}{
		{"driver pod template", k8sDry("spark.kubernetes.driver.podTemplateFile"), "", exitcode.NotFound},
		{"executor pod template", k8sDry("spark.kubernetes.executor.podTemplateFile"), "", exitcode.NotFound},
		{"oauthTokenFile", k8sStatus("spark.kubernetes.authenticate.submission.oauthTokenFile"), "", exitcode.NotFound},
		{"caCertFile", func(f string) []string {
			return append(k8sStatus("spark.kubernetes.authenticate.submission.caCertFile")(f), "--conf", "spark.kubernetes.authenticate.submission.oauthToken=t")
		}, "", exitcode.NotFound},
		{"kubeconfig", func(string) []string {
			return []string{"status", "ns:app-driver", "--master", "k8s://http://127.0.0.1:1"}
		}, "KUBECONFIG", 0},
		{"Maven settings.xml", func(f string) []string { return append(append([]string{"resolve", "--settings", f}, demo...), coord) }, "", exitcode.NotFound},
		{"lock", func(f string) []string { return append(append([]string{"resolve", "--lock", f}, demo...), coord) }, "", 0},
		{"lock with --frozen", func(f string) []string {
			return append(append([]string{"resolve", "--frozen", "--lock", f}, demo...), coord)
		}, "", exitcode.StaleLock},
		{"prebake.yaml", func(f string) []string { return []string{"resolve", "--config", f, coord} }, "", exitcode.NotFound},
		{"--properties-file", func(f string) []string {
			return []string{"rewrite", "--lock", lockFile, "--", "--master", "local[1]", "--properties-file", f, "app.jar"}
		}, "", exitcode.NotFound},
		{"rewrite --manifest", func(f string) []string { return []string{"rewrite", "--lock", lockFile, "--manifest", f} }, "", exitcode.NotFound},
		{"warm --file", func(f string) []string {
			return []string{"warm", "--file", f, "--store", "file://" + filepath.Join(tmp, "store")}
		}, "", exitcode.NotFound},
		{"gc --keep-sets", func(f string) []string {
			return []string{"gc", "--keep-sets", f, "--store", "file://" + filepath.Join(tmp, "store")}
		}, "", exitcode.NotFound},
	}
	for _, tt := range tests {
		for _, kind := range []string{"fifo", "/dev/zero", "directory", "missing", "too large"} {
			want := exitcode.DataErr
			if kind == "missing" {
				if want = tt.missing; want == 0 {
					continue
				}
			}
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				f := hostileFiles(t)[kind]
				args := tt.args(f)
				if tt.env != "" {
					t.Setenv(tt.env, f)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				start := time.Now()
				code, stdout, stderr := runPrebake(ctx, args...)
				took := time.Since(start)
				if code != want || !strings.Contains(stderr, f) {
					t.Errorf("prebake %s: exit %d, want %d naming %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, f, stdout, stderr)
				}
				if took > 2*time.Second {
					t.Errorf("took %s, want < 2s", took)
				}
			})
		}
	}
	// spark-defaults.conf is read only when it is a regular file
	// (Utils.getDefaultPropertiesFile: isFile), as Spark does: a FIFO there
	// is skipped, never read.
	t.Run("spark-defaults.conf FIFO is skipped", func(t *testing.T) {
		conf := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(conf, "spark-defaults.conf"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SPARK_CONF_DIR", conf)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		code, _, stderr := runPrebake(ctx, "rewrite", "--lock", lockFile, "--", "--master", "local[1]", "app.jar")
		if code != 0 || time.Since(start) > 2*time.Second {
			t.Errorf("exit %d after %s, want 0 at once\n%s", code, time.Since(start), stderr)
		}
	})
}
