package pipeline

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

// TestPrepareMemo: with a Memo, a second submission with the same packages
// (a batch's next line) is only rewritten: it succeeds with the first's
// jars after the repository and the cache are gone, and its own argv (its
// --name) is kept; without the Memo it would resolve again, and fail.
func TestPrepareMemo(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	repo, cache := filepath.Join(tmp, "repo"), filepath.Join(tmp, "cache")
	if out, err := exec.Command("cp", "-r", filepath.Join(wd, "..", "testdata", "demo-repo"), repo).CombinedOutput(); err != nil {
		t.Fatalf("copying the demo repository: %v\n%s", err, out)
	}
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	load := func(name string) *submit.Submission {
		sub, err := submit.LoadSubmission([]string{"--master", "local[2]", "--name", name,
			"--packages", "org.slf4j:slf4j-api:1.7.36", "--repositories", "file://" + repo + "/", "app.py"}, os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}
	o := Options{Request: resolver.Request{NoDefaultRepositories: true, CacheDir: cache}, CacheDir: cache, Memo: &Memo{}}
	first, err := Prepare(context.Background(), load("a"), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, cache} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	second, err := Prepare(context.Background(), load("b"), o)
	if err != nil {
		t.Fatalf("with the memo: %v", err)
	}
	want := strings.ReplaceAll(strings.Join(first.Args, "\x00"), "\x00--name\x00a\x00", "\x00--name\x00b\x00")
	if diff := cmp.Diff(strings.Split(want, "\x00"), second.Args); diff != "" {
		t.Errorf("second submission's args (-want +got):\n%s", diff)
	}
	o.Memo = nil
	_, err = Prepare(context.Background(), load("c"), o)
	if err == nil {
		t.Fatalf("without the memo, Prepare did not resolve again (the repository is gone): the test proves nothing")
	}
	t.Logf("without the memo: %v", err)
}
