package layers

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers/registrytest"
)

// TestITInspectPythonSparkImage reads the target of the real node's Spark
// image (hack/infra.d/55-node.sh's Debian 12 root file system with
// python3, 65-spark-image.sh's layers), pushed to the real registry as
// internal/testenv/cluster pushes it: python3.11, glibc 2.36, x86_64,
// read from the registry's layers; a second read is served by the
// per-layer cache.
func TestITInspectPythonSparkImage(t *testing.T) {
	testenv.RequireIT(t)
	layout := filepath.Join(testenv.CacheDir(), "spark-images-current", "spark-3.5.9")
	if _, err := os.Stat(filepath.Join(layout, "index.json")); err != nil {
		testenv.Skip(t, "the Spark image is not built (hack/infra.sh builds it): "+err.Error())
	}
	reg := registrytest.Start(t)
	ctx := context.Background()
	ref := reg.Repo("spark:3.5.9")
	if _, err := BuildImage(ctx, BuildSpec{Base: OCIPrefix + layout + ":spark-3.5.9", Target: ref, Platforms: []PlatformFiles{{Platform: "linux/amd64"}}}); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	start := time.Now()
	got, err := InspectPython(ctx, ref, WithCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	first := time.Since(start)
	want := ImagePython{Ref: got.Ref, Interpreter: "/usr/bin/python3", Version: "3.11", Machine: "x86_64", Glibc: "2.36"}
	if *got != want {
		t.Errorf("InspectPython(%s) = %+v, want %+v", ref, *got, want)
	}
	// A new process: the memory cache emptied, the disk one kept.
	processPyIndex.mu.Lock()
	processPyIndex.mem = map[string]*layerPython{}
	processPyIndex.mu.Unlock()
	start = time.Now()
	if again, err := InspectPython(ctx, ref, WithCacheDir(cache)); err != nil || *again != want {
		t.Errorf("second read: %+v, %v", again, err)
	}
	t.Logf("InspectPython %s: %s first, %s from the layer cache", ref, first.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
