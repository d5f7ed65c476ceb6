package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// pomOnlyHome returns a HOME whose ~/.m2/repository holds slf4j-api
// 1.7.36's POM without its jar (as after a Maven build that fetched only
// the POM), and the module's directory there.
func pomOnlyHome(t *testing.T, root string) (home, dir string) {
	t.Helper()
	home = t.TempDir()
	dir = filepath.Join(home, ".m2", "repository", "org", "slf4j", "slf4j-api", "1.7.36")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pom, err := os.ReadFile(filepath.Join(root, "testdata", "demo-repo", "org", "slf4j", "slf4j-api", "1.7.36", "slf4j-api-1.7.36.pom"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slf4j-api-1.7.36.pom"), pom, 0o644); err != nil {
		t.Fatal(err)
	}
	return home, dir
}

// TestM2POMOnlyCLI: ~/.m2 holds slf4j-api's POM and not its jar, the demo
// repository (standing for Central, through DEFAULT_ARTIFACT_REPOSITORY)
// holds both. Spark takes the module from local-m2-cache and fails with
// FAILED DOWNLOADS; prebake fails the same way (66, not found) and names the
// directory to remove and the other way out.
func TestM2POMOnlyCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	home, dir := pomOnlyHome(t, root)
	t.Setenv("HOME", home)
	t.Setenv("DEFAULT_ARTIFACT_REPOSITORY", "file://"+filepath.Join(root, "testdata", "demo-repo")+"/")
	cache := filepath.Join(tmp, "cache")

	code, _, stderr := runPrebake(context.Background(), "resolve", "--cache", cache, "--packages", "org.slf4j:slf4j-api:1.7.36")
	if code != exitcode.NotFound {
		t.Fatalf("exit %d, want %d (not found)\n%s", code, exitcode.NotFound, stderr)
	}
	for _, want := range []string{"holds this module's POM but not slf4j-api-1.7.36.jar", "FAILED DOWNLOADS", "remove " + dir + " and run again", "--no-default-repositories --repositories"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	// -o json: the same message in the failure object.
	code, stdout, _ := runPrebake(context.Background(), "resolve", "-o", "json", "--cache", cache, "--packages", "org.slf4j:slf4j-api:1.7.36")
	if code != exitcode.NotFound {
		t.Fatalf("-o json: exit %d", code)
	}
	var res struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout)
	}
	if !strings.Contains(res.Error, "remove "+dir) {
		t.Errorf("-o json error lacks the directory: %q", res.Error)
	}

	// Removing the directory, as the message says, fixes it.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runPrebake(context.Background(), "resolve", "-q", "--cache", cache, "--packages", "org.slf4j:slf4j-api:1.7.36"); code != 0 {
		t.Fatalf("after removing %s: exit %d\n%s", dir, code, stderr)
	}
}
