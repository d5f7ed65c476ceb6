package k8s

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/k8senv"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

// imageBinary builds prebake's own image as `make image` does (linux/amd64
// only) and takes /usr/local/bin/prebake out of it.
func imageBinary(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "img")
	cmd := exec.Command("go", "run", "./hack/image", "-target", "oci:"+dir+":latest", "-platforms", "linux/amd64", "-cache", k8scluster.ImageCache())
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the image: %v\n%s", err, out)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	// The layout's index names the image (or a platform index).
	for _, d := range m.Manifests {
		ii, err := idx.ImageIndex(d.Digest)
		if err == nil {
			im, err := ii.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			for _, pd := range im.Manifests {
				if pd.Platform != nil && pd.Platform.OS == "linux" && pd.Platform.Architecture == "amd64" {
					i, err := ii.Image(pd.Digest)
					if err != nil {
						t.Fatal(err)
					}
					return extractFile(t, mutate.Extract(i), "usr/local/bin/prebake")
				}
			}
		}
		if i, err := idx.Image(d.Digest); err == nil {
			return extractFile(t, mutate.Extract(i), "usr/local/bin/prebake")
		}
	}
	t.Fatal("no linux/amd64 image in the layout")
	return ""
}

func extractFile(t testing.TB, rc io.ReadCloser, name string) string {
	t.Helper()
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s not in the image", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Clean(h.Name) != name {
			continue
		}
		out := filepath.Join(t.TempDir(), "prebake")
		f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// TestNativeFromImageIT runs the binary of prebake's own image (no Spark,
// no Java inside) as `submit --submitter native` against the real API
// server: it creates the driver pod, Service and ConfigMap, polls the
// driver to its end and exits with its code.
func TestNativeFromImageIT(t *testing.T) {
	e := k8senv.NewEquiv(t)
	k := k8senv.StartKubelet(t, e.C)
	bin := imageBinary(t)
	const ns = "native-image"
	e.C.EnsureNamespace(t, ns)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if pod := k.WaitPod(t, ns); pod != "" {
			k.SetStatus(t, ns, pod, k8senv.PhaseWith(corev1.PodSucceeded, terminated(driverC, 3, "Error")))
		}
	}()
	// This run follows the driver to its end: CommonArgs without its
	// no-waiting conf.
	common := nativetest.CommonArgs(ns, "3.5.9")
	if i := slices.Index(common, "spark.kubernetes.submission.waitAppCompletion=false"); i > 0 {
		common = slices.Delete(common, i-1, i+1)
	}
	args := nativetest.Expand(append(common, "--class", "org.example.Main", "local:///opt/app.jar"), e.Repl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"submit", "--submitter", "native", "--spark-version", "3.5.9", "--poll-interval", "200ms", "--"}, args...)...)
	// No Spark, no Java: an empty PATH.
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/nonexistent", "SPARK_USER=prebake"}
	out, err := cmd.CombinedOutput()
	<-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want the driver's 3:\n%s", err, out)
	}
	cms, err := e.C.Admin.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := e.C.Admin.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs.Items) != 1 || len(cms.Items) < 1 {
		t.Errorf("services %d, configmaps %d", len(svcs.Items), len(cms.Items))
	}
	t.Logf("%s", out)
}
