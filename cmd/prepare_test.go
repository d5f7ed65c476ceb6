package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// runPrepare runs submit's resolve → bake → rewrite with the given submit
// flags over the demo repository.
func runPrepare(t *testing.T, flags []string, args []string) ([]string, error) {
	t.Helper()
	p, err := runPrepared(t, flags, args)
	if err != nil {
		return nil, err
	}
	return p.Sub.Args(), nil
}

// runPrepared is runPrepare with all prepare returns.
func runPrepared(t *testing.T, flags []string, args []string) (*submit.Prepared, error) {
	t.Helper()
	root := repoRoot(t)
	g := &globals{quiet: true}
	f := &submitFlags{}
	fs := newSubmitFlagSet(f)
	base := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata/demo-repo") + "/", "--cache", t.TempDir()}
	if err := fs.Parse(append(base, flags...)); err != nil {
		t.Fatal(err)
	}
	if _, err := applySettings(fs, "", os.Getenv); err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	sub, err := submit.LoadSubmission(args, os.Environ())
	if err != nil {
		return nil, err
	}
	return prepare(context.Background(), g, f, pipeline.Prepare, sub, &stderr)
}

func TestPrepareImageTarget(t *testing.T) {
	t.Chdir(t.TempDir()) // no prebake.yaml around
	root := repoRoot(t)
	target := "oci:" + filepath.Join(t.TempDir(), "image")
	args := []string{
		"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--name", "demo", "--class", "com.example.Main",
		"--packages", "ch.qos.logback:logback-classic:1.4.11",
		"--conf", "spark.kubernetes.container.image=oci:" + filepath.Join(root, "testdata/base-image") + ":3.5.0-amd64",
		"local:///opt/app.jar", "--packages", "app-arg",
	}
	p, err := runPrepared(t, []string{"--image-target", target}, args)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	got := p.Sub.Args()
	// The base's jars say Spark 3.5.0: the native submitter's rules.
	if p.DriverSparkVersion != "3.5.0" {
		t.Errorf("DriverSparkVersion = %q, want 3.5.0 (the base's spark-core jar)", p.DriverSparkVersion)
	}
	joined := strings.Join(got, " ")
	for _, want := range []string{
		"spark.kubernetes.container.image=" + target + "@sha256:",
		"local:///opt/spark/prebake/jars/ch.qos.logback_logback-classic-1.4.11.jar",
		"local:///opt/spark/prebake/jars/org.slf4j_slf4j-api-2.0.7.jar",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("rewritten args lack %q:\n%s", want, joined)
		}
	}
	// The packages flag is gone before the primary resource; the app's own
	// "--packages app-arg" is kept.
	i := slices.Index(got, "local:///opt/app.jar")
	if i < 0 || slices.Contains(got[:i], "--packages") {
		t.Errorf("packages not removed or primary lost: %q", got)
	}
	if !slices.Equal(got[i+1:], []string{"--packages", "app-arg"}) {
		t.Errorf("app args changed: %q", got[i+1:])
	}
	assertNoPackages(t, got)
}

func TestPrepareStore(t *testing.T) {
	t.Chdir(t.TempDir())
	store := "file://" + t.TempDir()
	args := []string{
		"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--conf", "spark.jars.packages=ch.qos.logback:logback-classic:1.4.11",
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.0",
		"local:///opt/app.jar",
	}
	got, err := runPrepare(t, []string{"--store", store}, args)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	joined := strings.Join(got, " ")
	if !strings.Contains(joined, "ch.qos.logback_logback-classic-1.4.11.jar") || !strings.Contains(joined, "/jars/sha256/") {
		t.Errorf("store URLs missing: %s", joined)
	}
	assertNoPackages(t, got)
}

func TestPrepareConfigFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	store := "file://" + t.TempDir()
	if err := os.WriteFile("prebake.yaml", []byte("store: "+store+"\nurlStyle: https\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--packages", "org.slf4j:slf4j-api:2.0.7", "local:///opt/app.jar"}
	got, err := runPrepare(t, nil, args)
	if err != nil {
		t.Fatalf("prepare with prebake.yaml: %v", err)
	}
	if !strings.Contains(strings.Join(got, " "), "org.slf4j_slf4j-api-2.0.7.jar") {
		t.Errorf("store from prebake.yaml not used: %q", got)
	}
	// An unknown key is an error naming the file.
	if err := os.WriteFile("prebake.yaml", []byte("stor: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runPrepare(t, nil, args); err == nil || !strings.Contains(err.Error(), "prebake.yaml") {
		t.Errorf("bad config: got %v, want an error naming prebake.yaml", err)
	}
}

func TestPrepareClusterWithoutCacheRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PREBAKE_STORE", "")
	t.Setenv("PREBAKE_IMAGE_TARGET", "")
	args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--packages", "org.slf4j:slf4j-api:2.0.7", "local:///opt/app.jar"}
	if _, err := runPrepare(t, nil, args); err == nil {
		t.Fatal("cluster mode with neither --store nor --image-target: want an error")
	}
}

func assertNoPackages(t *testing.T, args []string) {
	t.Helper()
	s, err := submit.LoadSubmission(args, nil)
	if err != nil {
		t.Fatalf("re-parse: %v", err)
	}
	if p := s.Packages(); p.Packages != "" || p.Repositories != "" || p.Excludes != "" {
		t.Errorf("packages survived the rewrite: %+v", p)
	}
}

// A pod with no route to Maven: with --store and a matching --lock, a set
// already in the store gives the URLs and nothing is fetched or resolved.
func TestPrepareStoreFirstFetchesNothing(t *testing.T) {
	t.Chdir(t.TempDir())
	root := repoRoot(t)
	store := "file://" + t.TempDir()
	lock := filepath.Join(t.TempDir(), "prebake.lock")
	args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--packages", "ch.qos.logback:logback-classic:1.4.11", "local:///opt/app.jar"}
	repo := "file://" + filepath.Join(root, "testdata/demo-repo") + "/"
	run := func(cache string) []string {
		t.Helper()
		f := &submitFlags{}
		fs := newSubmitFlagSet(f)
		if err := fs.Parse([]string{"--no-default-repositories", "--repositories", repo, "--cache", cache, "--store", store, "--lock", lock}); err != nil {
			t.Fatal(err)
		}
		sub, err := submit.LoadSubmission(args, os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		got, err := prepare(context.Background(), &globals{quiet: true}, f, pipeline.Prepare, sub, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		if got.DriverSparkVersion != "" {
			t.Errorf("DriverSparkVersion = %q with a store, want none", got.DriverSparkVersion)
		}
		return got.Sub.Args()
	}
	first := run(filepath.Join(t.TempDir(), "cache1"))
	cache2 := filepath.Join(t.TempDir(), "cache2")
	second := run(cache2)
	if !slices.Equal(first, second) {
		t.Errorf("store-first args differ:\n%q\n%q", first, second)
	}
	// Nothing was downloaded into the second cache (only the rewrite work
	// dir may exist).
	entries, _ := os.ReadDir(cache2)
	for _, e := range entries {
		if e.Name() != "rewrite" {
			t.Errorf("store-first run wrote %s into the cache", e.Name())
		}
	}
	assertNoPackages(t, second)
}
