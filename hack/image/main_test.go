package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers"
)

// TestImage builds prebake's own image as `make image` does, for two
// platforms, into an OCI layout, twice: the digest must not change, and the
// index must list both platforms.
func TestImage(t *testing.T) {
	testenv.RequireIT(t)
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		testenv.Skip(t, "no CA bundle (apt-get install ca-certificates)")
	}
	t.Chdir("../..") // run from the module root, as make does
	ctx := context.Background()
	var digests []string
	for i := range 2 {
		target := "oci:" + filepath.Join(t.TempDir(), "img") + ":latest"
		if err := run(ctx, target, []string{"linux/amd64", "linux/arm64"}, "/etc/ssl/certs/ca-certificates.crt"); err != nil {
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
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds gave %s and %s: the image is not reproducible", digests[0], digests[1])
	}
}
