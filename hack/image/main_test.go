package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers"
)

// TestImage builds prebake's own image as `make image` does, for two
// platforms, into an OCI layout, three times (no cache; -cache, empty; the
// same cache, which must then hold the binaries and not rebuild them): the
// digest must not change, and the index must list both platforms.
func TestImage(t *testing.T) {
	testenv.RequireIT(t)
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		testenv.Skip(t, "no CA bundle (apt-get install ca-certificates)")
	}
	t.Chdir("../..") // run from the module root, as make does
	ctx := context.Background()
	var digests []string
	cache := t.TempDir()
	var cached []string
	for i, dir := range []string{"", cache, cache} {
		target := "oci:" + filepath.Join(t.TempDir(), "img") + ":latest"
		if err := run(ctx, target, []string{"linux/amd64", "linux/arm64"}, "/etc/ssl/certs/ca-certificates.crt", dir, testVersion); err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		info, err := layers.Inspect(ctx, target)
		if err != nil {
			t.Fatalf("inspect %s: %v", target, err)
		}
		if !slices.Equal(info.Platforms, []string{"linux/amd64", "linux/arm64"}) {
			t.Errorf("platforms %v, want linux/amd64 and linux/arm64", info.Platforms)
		}
		digests = append(digests, info.Digest)
		if dir != "" {
			bins, _ := filepath.Glob(filepath.Join(cache, "*", "linux-*", "prebake"))
			var mtimes []string
			for _, b := range bins {
				st, err := os.Stat(b)
				if err != nil {
					t.Fatal(err)
				}
				mtimes = append(mtimes, b+" "+st.ModTime().String())
			}
			if len(bins) != 2 {
				t.Errorf("build %d: cache holds %q, want one binary per platform", i, bins)
			}
			if cached != nil && !slices.Equal(cached, mtimes) {
				t.Errorf("build %d rebuilt the cached binaries: %q, before %q", i, mtimes, cached)
			}
			cached = mtimes
			// The binary is stamped, as make build's is.
			for _, b := range bins {
				if runtime.GOOS != "linux" || filepath.Base(filepath.Dir(b)) != "linux-"+runtime.GOARCH {
					continue // only the host's binary runs here
				}
				out, err := exec.Command(b, "--version").CombinedOutput()
				if err != nil || !strings.Contains(string(out), testVersion) {
					t.Errorf("build %d: %s --version: %v %q, want %s", i, b, err, out, testVersion)
				}
			}
		}
	}
	if digests[0] != digests[1] || digests[1] != digests[2] {
		t.Errorf("three builds gave %q: the image is not reproducible", digests)
	}
}

// testVersion is the version TestImage stamps.
const testVersion = "v9.8.7-3-gabcdef0-dirty"

// make image's binary is stamped as make build's: the version goes into
// -ldflags beside the reproducible flags, and a version that would split
// the flags is refused.
func TestBuildFlags(t *testing.T) {
	tests := []struct {
		version string
		want    []string
		wantErr bool
	}{
		{version: "", want: []string{"-trimpath", "-ldflags=-s -w -buildid="}},
		{version: testVersion, want: []string{"-trimpath", "-ldflags=-s -w -buildid= -X github.com/prebake/prebake/cmd.version=" + testVersion}},
		{version: "c1b94f9", want: []string{"-trimpath", "-ldflags=-s -w -buildid= -X github.com/prebake/prebake/cmd.version=c1b94f9"}},
		{version: "v1 -X main.evil=1", wantErr: true},
		{version: "v1'", wantErr: true},
	}
	for _, tt := range tests {
		got, err := buildFlags(tt.version)
		if (err != nil) != tt.wantErr {
			t.Errorf("buildFlags(%q): %v, wantErr %v", tt.version, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("buildFlags(%q) (-want +got):\n%s", tt.version, diff)
		}
	}
}
