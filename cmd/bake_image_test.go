package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/layers/registrytest"
	"github.com/prebake/prebake/lock"
)

// startBakeRegistry starts the real registry with basic auth (user
// registrytest.User, "prebake", password pw) and returns its host:port.
func startBakeRegistry(t *testing.T, pw string) string {
	t.Helper()
	return registrytest.Start(t, registrytest.WithPassword(pw)).Host
}

func runBakeCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = ExecuteContext(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// TestBakeImageCLI drives `prebake bake image` and `prebake inspect`
// against a real registry with htpasswd auth: --registry-auth, a cache hit
// with --lock (no jar fetched: the lock's repository does not exist), -o
// json, wrong credentials (77) and a missing base (66).
func TestBakeImageCLI(t *testing.T) {
	const pw = "cli-s3cret"
	host := startBakeRegistry(t, pw)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	dir := t.TempDir()
	data := []byte("not really a jar")
	sum := sha256.Sum256(data)
	jar := filepath.Join(dir, "x.jar")
	os.WriteFile(jar, data, 0o644)
	lf := &lock.File{Inputs: lock.Inputs{Packages: []string{"com.example:x:1.0"}, Conflict: "latest"},
		Artifacts: []lock.Artifact{{Coord: "com.example:x:1.0", File: "com.example_x-1.0.jar", Sha256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Repository: "http://127.0.0.1:1/nowhere/"}}}
	lockPath := filepath.Join(dir, "prebake.lock")
	if err := lock.Write(lockPath, lf); err != nil {
		t.Fatal(err)
	}
	base := "oci:../testdata/base-image:3.5.0-amd64"
	target := host + "/team/jobs"
	first, err := layers.Bake(context.Background(), layers.BakeInput{Lock: lf, Jars: lock.LocalJars([]string{jar}), Base: base, Target: target}, layers.WithBasicAuth("prebake", pw))
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runBakeCLI(t, "bake", "image", "--base", base, "--target", target, "--lock", lockPath, "--cache", t.TempDir(), "--registry-auth", "prebake:"+pw)
	if code != 0 {
		t.Fatalf("bake image: exit %d: %s", code, errOut)
	}
	want := first.Ref + "\nspark.kubernetes.container.image=" + first.Ref + "\nspark.jars=local:///opt/spark/prebake/jars/com.example_x-1.0.jar\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(errOut+out, pw) {
		t.Error("output leaks the password")
	}

	code, out, errOut = runBakeCLI(t, "bake", "image", "-o", "json", "--base", base, "--target", target, "--lock", lockPath, "--cache", t.TempDir(), "--registry-auth", "prebake:"+pw)
	var js struct {
		Ref       string            `json:"ref"`
		CacheHit  bool              `json:"cacheHit"`
		Requests  int               `json:"registryRequests"`
		SparkConf map[string]string `json:"sparkConf"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || !js.CacheHit || js.Ref != first.Ref || js.Requests > 3 || js.SparkConf["spark.kubernetes.container.image"] != first.Ref {
		t.Errorf("json: exit %d %+v: %s %s", code, js, out, errOut)
	}

	code, out, _ = runBakeCLI(t, "inspect", first.Ref, "--registry-auth", "prebake:"+pw)
	if code != 0 || !strings.Contains(out, "dev.prebake.lock="+lf.Hash()) || !strings.Contains(out, "dev.prebake.coords=com.example:x:1.0") {
		t.Errorf("inspect: exit %d:\n%s", code, out)
	}

	code, _, errOut = runBakeCLI(t, "bake", "image", "--base", base, "--target", target, "--lock", lockPath, "--registry-auth", "prebake:wrong-pw")
	if code != exitcode.NoPerm || strings.Contains(errOut, "wrong-pw") {
		t.Errorf("wrong credentials: exit %d (want 77): %s", code, errOut)
	}
	code, _, errOut = runBakeCLI(t, "bake", "image", "--base", "oci:"+filepath.Join(dir, "no-such-layout"), "--target", target, "--lock", lockPath)
	if code != exitcode.NotFound {
		t.Errorf("missing base: exit %d (want 66): %s", code, errOut)
	}
	code, _, _ = runBakeCLI(t, "bake", "image", "--target", target, "--lock", lockPath)
	if code != exitcode.Usage {
		t.Errorf("no --base: exit %d (want 64)", code)
	}
}
