package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/s3store/s3test"
)

// s3FileRepo writes a two-module Maven repository (lib-a depends on lib-b)
// and returns its file:// URL.
func s3FileRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mod := func(a, deps string) {
		dir := filepath.Join(root, "com", "example", a, "1.0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		pom := fmt.Sprintf(`<project><modelVersion>4.0.0</modelVersion><groupId>com.example</groupId><artifactId>%s</artifactId><version>1.0</version><dependencies>%s</dependencies></project>`, a, deps)
		if err := os.WriteFile(filepath.Join(dir, a+"-1.0.pom"), []byte(pom), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, a+"-1.0.jar"), []byte("PK\x03\x04 fake jar "+a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mod("lib-b", "")
	mod("lib-a", `<dependency><groupId>com.example</groupId><artifactId>lib-b</artifactId><version>1.0</version></dependency>`)
	return "file://" + root + "/"
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := ExecuteContext(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestBakeS3FileStoreCLI(t *testing.T) {
	repo := s3FileRepo(t)
	store := "file://" + t.TempDir()
	cache := t.TempDir()
	lock := filepath.Join(t.TempDir(), "prebake.lock")
	args := []string{"bake", "s3", "--store", store, "--no-default-repositories", "--repositories", repo,
		"--cache", cache, "--lock", lock, "--packages", "com.example:lib-a:1.0"}
	out, stderr, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("bake s3: exit %d: %s", code, stderr)
	}
	urls := strings.Split(strings.TrimSpace(out), ",")
	if len(urls) != 2 || !strings.HasSuffix(urls[0], "/com.example_lib-a-1.0.jar") || !strings.HasSuffix(urls[1], "/com.example_lib-b-1.0.jar") {
		t.Fatalf("spark.jars = %q", out)
	}
	for _, u := range urls {
		if _, err := os.Stat(strings.TrimPrefix(u, "file://")); err != nil {
			t.Error(err)
		}
	}
	// From the lock alone, as JSON: a hit.
	out, stderr, code = runCLI(t, "bake", "s3", "--store", store, "--lock", lock, "--cache", cache, "-o", "json")
	if code != 0 {
		t.Fatalf("bake s3 --lock: exit %d: %s", code, stderr)
	}
	var js bakeS3JSON
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if !js.Hit || js.BytesSent != 0 || len(js.Jars) != 2 || js.SparkJars != strings.Join(urls, ",") {
		t.Errorf("second bake: %+v", js)
	}
	// Usage errors.
	for _, bad := range [][]string{
		{"bake", "s3", "--lock", lock},
		{"bake", "s3", "--store", store, "--lock", lock, "--url-style", "ftp"},
		{"bake", "s3", "--store", store, "--lock", lock, "--expires", "200h"},
		{"bake", "s3", "--store", store},
	} {
		if _, _, code := runCLI(t, bad...); code != exitcode.Usage {
			t.Errorf("%v: exit %d, want 64", bad, code)
		}
	}
}

func TestWarmCLIWithVersity(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t, "warm-cli")
	proxy := srv.NewProxy(t)
	repo := s3FileRepo(t)
	dir := t.TempDir()
	sets := "sets:\n  - name: a\n    packages: [\"com.example:lib-a:1.0\"]\n  - name: b\n    packages: [\"com.example:lib-b:1.0\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "sets.yaml"), []byte(sets), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	args := []string{"warm", "--file", filepath.Join(dir, "sets.yaml"), "--store", "s3://" + bucket + "/p", "--endpoint", proxy.URL, "--path-style",
		"--no-default-repositories", "--repositories", repo, "--cache", t.TempDir(), "--concurrency", "4"}
	out, stderr, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("warm: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, s3test.SecretKey) || strings.Contains(out, s3test.SecretKey) {
		t.Fatal("the secret key was printed")
	}
	proxy.Reset()
	out, stderr, code = runCLI(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("second warm: exit %d: %s", code, stderr)
	}
	if n := proxy.BodyBytes.Load(); n != 0 {
		t.Errorf("second warm sent %d body bytes, want 0", n)
	}
	if strings.Count(out, `"hit":true`) != 2 {
		t.Errorf("second warm: want two hits: %s", out)
	}
	// bake s3 with presigned URLs: the URLs are on stdout only.
	out, stderr, code = runCLI(t, "bake", "s3", "--store", "s3://"+bucket+"/p", "--endpoint", srv.Endpoint, "--path-style",
		"--no-default-repositories", "--repositories", repo, "--cache", t.TempDir(), "--packages", "com.example:lib-a:1.0",
		"--url-style", "presigned", "--expires", "2h")
	if code != 0 {
		t.Fatalf("bake s3 presigned: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "X-Amz-Signature=") || strings.Contains(stderr, "X-Amz-Signature") || !strings.Contains(stderr, "bearer credentials") {
		t.Errorf("presigned: stdout %q, stderr %q", out, stderr)
	}
	// Wrong credentials: exit 77, no secret in the message.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value-123")
	_, stderr, code = runCLI(t, append(args[:len(args)-2], "--concurrency", "1")...)
	if code != exitcode.NoPerm || strings.Contains(stderr, "wrong-secret-value-123") || !strings.Contains(stderr, "s3://"+bucket+"/p/") {
		t.Errorf("bad credentials: exit %d, stderr %s", code, stderr)
	}
}

func TestGCCLI(t *testing.T) {
	repo := s3FileRepo(t)
	dir := t.TempDir()
	store := "file://" + dir
	cache := t.TempDir()
	lockA := filepath.Join(t.TempDir(), "a.lock")
	for _, args := range [][]string{
		{"--lock", lockA, "--packages", "com.example:lib-a:1.0"},
		{"--packages", "com.example:lib-b:1.0", "--exclude-packages", "none:none"},
	} {
		base := []string{"bake", "s3", "-q", "--store", store, "--no-default-repositories", "--repositories", repo, "--cache", cache}
		if _, stderr, code := runCLI(t, append(base, args...)...); code != 0 {
			t.Fatalf("bake: exit %d: %s", code, stderr)
		}
	}
	keep := filepath.Join(filepath.Dir(lockA), "keep.txt")
	if err := os.WriteFile(keep, []byte("# sets in use\na.lock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// lib-a's set references lib-b's jar too, so only lib-b's set goes.
	out, stderr, code := runCLI(t, "gc", "--store", store, "--keep-sets", keep, "--grace", "0s", "--dry-run")
	if code != 0 || strings.Count(out, "set\t") != 1 || strings.Contains(out, "jar\t") {
		t.Fatalf("gc --dry-run: exit %d, out %q, err %s", code, out, stderr)
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "sets", "*.json"))
	if len(sets) != 2 {
		t.Fatalf("dry run deleted sets: %v", sets)
	}
	if _, stderr, code := runCLI(t, "gc", "--store", store, "--keep-sets", keep, "--grace", "0s"); code != 0 {
		t.Fatalf("gc: exit %d: %s", code, stderr)
	}
	sets, _ = filepath.Glob(filepath.Join(dir, "sets", "*.json"))
	if len(sets) != 1 {
		t.Errorf("after gc: sets %v, want one", sets)
	}
	if _, _, code := runCLI(t, "gc", "--store", store); code != exitcode.Usage {
		t.Errorf("gc without a rule: exit %d, want 64", code)
	}
}
