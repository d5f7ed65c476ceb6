package cmd

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionOf: the module version of a `go install …@v1.2.3` is printed
// as it is; a checkout build without a stamp names its revision.
func TestVersionOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install @version", debug.BuildInfo{Main: debug.Module{Path: "github.com/prebake/prebake", Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201120000-abcdefabcdef"}}, "v0.0.0-20261201120000-abcdefabcdef"},
		{"checkout, VCS stamped", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "(devel) 0123456789ab-dirty"},
		{"nothing known", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
	} {
		if got := versionOf(&tt.bi); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestMakeBuildStampsVersion reproduces finding 17 of review 3 (the
// version part): `make build` then `prebake --version` printed
// "prebake (devel)". The Makefile now stamps `git describe` (or VERSION=…).
func TestMakeBuildStampsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := filepath.Join(t.TempDir(), "prebake")
	// Without VERSION: the checkout's git describe.
	desc, err := exec.Command("git", "-C", "..", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Skipf("git describe: %v", err)
	}
	c := exec.Command("make", "-s", "build", "BIN="+bin)
	c.Dir = ".."
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if want := "prebake " + strings.TrimSpace(string(desc)) + "\n"; err != nil || string(out) != want {
		t.Errorf("--version: %q (%v), want %q", out, err, want)
	}
}
