package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/lock"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
)

// writeJarsLock writes a lock of jars named by coords (content derived from
// the coordinate) with the jars in the lock's cache layout's stead: the
// test gives them through the jars' own repository.
func writeJarsLock(t *testing.T, dir, name string, coords ...string) string {
	t.Helper()
	repo := filepath.Join(dir, "repo")
	lf := &lock.File{Inputs: lock.Inputs{Packages: coords, Conflict: "latest"}}
	for _, c := range coords {
		p := strings.Split(c, ":")
		data := []byte(strings.Repeat("jar bytes of "+c+"\n", 200))
		sum := sha256.Sum256(data)
		rel := filepath.Join(strings.ReplaceAll(p[0], ".", "/"), p[1], p[2], p[1]+"-"+p[2]+".jar")
		os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
		lf.Artifacts = append(lf.Artifacts, lock.Artifact{Coord: c, File: p[0] + "_" + p[1] + "-" + p[2] + ".jar", Sha256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Repository: "file://" + repo + "/"})
	}
	path := filepath.Join(dir, name)
	if err := lock.Write(path, lf); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBakeImageSharedLockCLI: `bake image --shared-lock` reports the shared
// and per-job layers' digests and sizes in -o json, the same shared layer
// for two jobs, spark.jars as without it; --compression estargz is
// reported; a missing shared lock is 66, a malformed one 65.
func TestBakeImageSharedLockCLI(t *testing.T) {
	dir := t.TempDir()
	platform := writeJarsLock(t, dir, "platform.lock", "io.delta:delta-spark_2.12:3.2.0", "org.apache.hadoop:hadoop-aws:3.3.4")
	jobA := writeJarsLock(t, dir, "a.lock", "io.delta:delta-spark_2.12:3.2.0", "org.apache.hadoop:hadoop-aws:3.3.4", "org.apache.kafka:kafka-clients:3.4.1")
	jobB := writeJarsLock(t, dir, "b.lock", "io.delta:delta-spark_2.12:3.2.0", "org.apache.hadoop:hadoop-aws:3.3.4", "org.tukaani:xz:1.9")
	base := "oci:../testdata/base-image:3.5.0-amd64"
	cache := t.TempDir()
	type layer struct {
		Digest string   `json:"digest"`
		Size   int64    `json:"size"`
		Files  []string `json:"files"`
		Role   string   `json:"role"`
	}
	type out struct {
		Compression string            `json:"compression"`
		Layers      []layer           `json:"layers"`
		SparkConf   map[string]string `json:"sparkConf"`
	}
	bake := func(lockPath string, extra ...string) out {
		t.Helper()
		args := append([]string{"bake", "image", "-o", "json", "--base", base, "--target", "oci:" + filepath.Join(t.TempDir(), "img"), "--lock", lockPath, "--cache", cache}, extra...)
		code, stdout, stderr := runBakeCLI(t, args...)
		var o out
		if code != 0 || json.Unmarshal([]byte(stdout), &o) != nil {
			t.Fatalf("%v: exit %d: %s %s", args, code, stdout, stderr)
		}
		return o
	}
	a, b := bake(jobA, "--shared-lock", platform), bake(jobB, "--shared-lock", platform)
	single := bake(jobA)
	if len(a.Layers) != 2 || a.Layers[0].Role != "shared" || a.Layers[1].Role != "job" || a.Layers[0].Size == 0 || a.Layers[1].Size == 0 {
		t.Fatalf("layers %+v, want a shared and a job layer with sizes", a.Layers)
	}
	if a.Layers[0].Digest != b.Layers[0].Digest || a.Layers[1].Digest == b.Layers[1].Digest {
		t.Errorf("shared layers %s %s (want equal), job layers %s %s (want different)", a.Layers[0].Digest, b.Layers[0].Digest, a.Layers[1].Digest, b.Layers[1].Digest)
	}
	if diff := cmp.Diff(single.SparkConf["spark.jars"], a.SparkConf["spark.jars"]); diff != "" {
		t.Errorf("spark.jars (-single +shared):\n%s", diff)
	}
	if e := bake(jobA, "--shared-lock", platform, "--compression", "estargz"); e.Compression != "estargz" || len(e.Layers) != 2 || e.Layers[0].Digest == a.Layers[0].Digest {
		t.Errorf("estargz: %+v", e)
	}
	code, _, stderr := runBakeCLI(t, "bake", "image", "--base", base, "--target", "oci:"+filepath.Join(t.TempDir(), "img"), "--lock", jobA, "--shared-lock", filepath.Join(dir, "nope.lock"))
	if code != exitcode.NotFound || !strings.Contains(stderr, "nope.lock") {
		t.Errorf("missing shared lock: exit %d (want 66): %s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.lock")
	os.WriteFile(bad, []byte("{not a lock"), 0o644)
	code, _, stderr = runBakeCLI(t, "bake", "image", "--base", base, "--target", "oci:"+filepath.Join(t.TempDir(), "img"), "--lock", jobA, "--shared-lock", bad)
	if code != exitcode.DataErr || !strings.Contains(stderr, "bad.lock") {
		t.Errorf("malformed shared lock: exit %d (want 65): %s", code, stderr)
	}
}
