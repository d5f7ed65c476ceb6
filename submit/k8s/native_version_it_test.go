package k8s

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/k8senv"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/layers/registrytest"
)

// TestNativeSparkVersionFromBakedImageIT: `prebake submit --submitter
// native --image-target` with no --spark-version, onto a base whose jars
// are Spark 4.0.1 under a tag that says nothing (acme/runtime:prod), in a
// real registry, against the real kube-apiserver. The objects read back
// follow Spark 4.0's rules: the on-demand PVC is ReadWriteOncePod (3.5:
// ReadWriteOnce), spark.driver.minMemoryOverhead is honoured (3.5 ignores
// it: 1024+384 MiB), the spark-version label is 4.0.1. A second submission
// hits the bake cache (nothing read from the base) and still knows 4.0.1.
func TestNativeSparkVersionFromBakedImageIT(t *testing.T) {
	e := newITEnv(t)
	reg := registrytest.Start(t).Repo("")
	base := reg + "/acme/runtime:prod"
	pushSpark4Base(t, base)
	ns := "nat-version"
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	testenv.WriteFile(t, tokenFile, e.c.AdminToken)
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cache := filepath.Join(dir, "cache")

	prebake := func(extra ...string) *exec.Cmd {
		args := append([]string{"submit", "--submitter", "native", "--image-target", reg + "/acme/prebaked",
			"--cache", cache, "--no-default-repositories",
			"--repositories", "file://" + filepath.Join(root, "testdata", "spark-demo", "repo") + "/",
			"--spark-submit", "/nonexistent/spark-submit", "--poll-interval", "200ms", "--pending-timeout", "2m"}, extra...)
		args = append(args, "--",
			"--master", "k8s://"+e.c.URL, "--deploy-mode", "cluster", "--name", "spark4-jars",
			"--conf", "spark.kubernetes.namespace="+ns,
			"--conf", confOAuthTokenFile+"="+tokenFile, "--conf", confCACertFile+"="+e.c.CAFile,
			"--conf", "spark.kubernetes.container.image="+base,
			"--driver-memory", "1g", "--conf", "spark.driver.minMemoryOverhead=1g",
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.claimName=OnDemand",
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.storageClass=standard",
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.sizeLimit=1Gi",
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.mount.path=/data",
			"--packages", "dev.prebake.demo:greeting:1.0", "--class", "Main", "local:///opt/app/app.jar")
		cmd := exec.Command(e.prebake(t), args...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECONFIG=", "SPARK_HOME=", "SPARK_CONF_DIR="+t.TempDir(),
			"DOCKER_CONFIG="+t.TempDir(), "PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=", "PREBAKE_CONFIG=", "USER=it")
		return cmd
	}

	// 1. Bake and submit: the objects are created.
	var driver *corev1.Pod
	var pvcs []corev1.PersistentVolumeClaim
	wait := e.kubeletScript(t, ns, func(pod string) {
		ctx := context.Background()
		if p, err := e.c.Admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{}); err == nil {
			driver = p
		}
		// The submitter creates the driver's PVCs after its pod (as Spark
		// does, owned by it), so they may come a moment after the pod.
		for deadline := time.Now().Add(30 * time.Second); len(pvcs) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if l, err := e.c.Admin.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{}); err == nil {
				pvcs = l.Items
			}
		}
		e.k.RunToEnd(t, ns, pod, []string{"INFO SparkContext: Running Spark version 4.0.1"},
			k8senv.PhaseWith(corev1.PodSucceeded, terminated(driverC, 0, "Completed")))
	})
	cmd := prebake()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	wait()
	if err != nil {
		t.Fatalf("prebake submit: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), ": baked (base "+base+")") {
		t.Errorf("no bake onto %s:\n%s", base, stderr.String())
	}
	if driver == nil {
		t.Fatalf("no driver pod:\n%s", stderr.String())
	}
	if got := driver.Labels["spark-version"]; got != "4.0.1" {
		t.Errorf("driver label spark-version=%q, want 4.0.1 (the base's jars)", got)
	}
	if img := driver.Spec.Containers[0].Image; !strings.HasPrefix(img, reg+"/acme/prebaked") {
		t.Errorf("driver image %q, want the baked one", img)
	}
	// 1g + max(0.1 × 1g, 1g): Spark 4.0's spark.driver.minMemoryOverhead.
	if got := driver.Spec.Containers[0].Resources.Limits.Memory().String(); got != "2Gi" {
		t.Errorf("driver memory limit %s, want 2Gi (4.0: minMemoryOverhead honoured; 3.5 gives 1408Mi)", got)
	}
	if len(pvcs) != 1 || !slices.Equal(pvcs[0].Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}) {
		t.Errorf("on-demand PVCs %+v, want one ReadWriteOncePod (Spark 4.0's default)", pvcs)
	}

	// 2. The same submission hits the bake cache; --dry-run prints the
	// objects it would create: still 4.0.1's.
	cmd = prebake("--dry-run", "-o", "yaml")
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("prebake submit --dry-run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), ": cache hit (base "+base+")") {
		t.Errorf("second submission is not a bake-cache hit:\n%s", stderr.String())
	}
	y := stdout.String()
	for _, want := range []string{"spark-version: 4.0.1\n", "- ReadWriteOncePod\n", "memory: 2Gi\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("cache-hit dry run lacks %q:\n%s", want, y)
		}
	}
}

// pushSpark4Base pushes a base whose /opt/spark/jars say Spark 4.0.1 and
// Scala 2.13 to ref.
func pushSpark4Base(t *testing.T, ref string) {
	t.Helper()
	var files []layers.File
	for _, j := range []string{"scala-library-2.13.14.jar", "spark-core_2.13-4.0.1.jar", "spark-sql_2.13-4.0.1.jar"} {
		data := emptyJar(t)
		files = append(files, layers.File{Name: "/opt/spark/jars/" + j, Mode: 0o644, Size: int64(len(data)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }})
	}
	spec := layers.BuildSpec{Target: ref, Entrypoint: []string{"/opt/entrypoint.sh"},
		Platforms: []layers.PlatformFiles{{Platform: "linux/amd64", Layers: [][]layers.File{files}}}}
	if _, err := layers.BuildImage(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
}

// emptyJar is a valid, empty jar.
func emptyJar(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := zip.NewWriter(&buf).Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
