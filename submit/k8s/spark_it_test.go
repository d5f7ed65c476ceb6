package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers/registrytest"
)

// TestK8sRealSparkSubmitIT runs the whole `prebake submit` journey with the
// real spark-submit (pyspark 3.5) against the real kube-apiserver: the
// package is resolved, baked into the argv's base image and pushed to a real
// registry (Debian docker-registry), the argv is rewritten, and Spark's own
// K8s client creates the driver pod and its ConfigMap. From the API server:
// the driver pod runs the baked image, and spark.properties holds the
// local:// jar and no packages key. The test kubelet ends the driver with
// exit code 3, which is prebake's exit code.
func TestK8sRealSparkSubmitIT(t *testing.T) {
	testenv.RequireIT(t)
	sparkHome, _ := testenv.SparkHome(t, "3.5.9")
	e := newITEnv(t)
	ns := "real-spark"
	reg, base := e.baseInRegistry(t, ns)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, e.c.adminToken)
	root, _ := filepath.Abs(filepath.Join("..", ".."))

	var driverPod *corev1.Pod
	var confMaps []corev1.ConfigMap
	// The kubelet's part, once spark-submit made the pod: resolving,
	// baking and a JVM's start take a while on a busy machine, so it waits
	// longer than kubeletScript does.
	done := make(chan struct{})
	wait := func() { <-done }
	go func() {
		defer close(done)
		pod := ""
		for start := time.Now(); pod == "" && time.Since(start) < 4*time.Minute; time.Sleep(200 * time.Millisecond) {
			l, err := e.c.admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=driver"})
			if err == nil && len(l.Items) > 0 {
				pod = l.Items[0].Name
			}
		}
		if pod == "" {
			t.Errorf("no driver pod in %s after 4m", ns)
			return
		}
		ctx := context.Background()
		if p, err := e.c.admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{}); err == nil {
			driverPod = p
		}
		// Spark creates the ConfigMap right after the pod.
		for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(200 * time.Millisecond) {
			l, err := e.c.admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err == nil && len(l.Items) > 0 {
				confMaps = l.Items
				break
			}
		}
		e.runToEnd(t, ns, pod, []string{"INFO SparkContext: Running Spark version 3.5.9"},
			phaseWith(corev1.PodFailed, terminated(driverC, 3, "Error")))
	}()
	cmd := exec.Command(e.prebake(t), "submit", "-o", "json", "--image-target", reg+"/spark/prebaked",
		"--cache", filepath.Join(dir, "cache"), "--no-default-repositories",
		"--repositories", "file://"+filepath.Join(root, "testdata", "spark-demo", "repo")+"/",
		"--poll-interval", "200ms", "--pending-timeout", "4m", "--",
		"--master", "k8s://"+e.c.url, "--deploy-mode", "cluster", "--name", "real-submit",
		"--conf", "spark.kubernetes.namespace="+ns,
		"--conf", confOAuthTokenFile+"="+tokenFile, "--conf", confCACertFile+"="+e.c.caFile,
		"--conf", "spark.kubernetes.container.image="+base,
		"--packages", "dev.prebake.demo:greeting:1.0", "--class", "Main", "local:///opt/app/app.jar", "arg1")
	cmd.Env = append(os.Environ(), "HOME="+dir, "SPARK_HOME="+sparkHome, "SPARK_CONF_DIR="+t.TempDir(), "KUBECONFIG=",
		"DOCKER_CONFIG="+t.TempDir(), "PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=", "PREBAKE_CONFIG=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("prebake submit: %v, want exit 3 (the driver's)\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res struct {
		Source         string
		DriverExitCode *int
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Source != "driver" || res.DriverExitCode == nil || *res.DriverExitCode != 3 {
		t.Errorf("result %+v (%v):\n%s", res, err, stdout.String())
	}
	if driverPod == nil {
		t.Fatalf("no driver pod seen\n%s", stderr.String())
	}
	image := driverPod.Spec.Containers[0].Image
	if !strings.HasPrefix(image, reg+"/spark/prebaked") {
		t.Errorf("driver pod image %q, want the baked image in %s/spark/prebaked\n%s", image, reg, stderr.String())
	}
	if !strings.Contains(stderr.String(), "image "+image+": baked (base "+base+")") {
		t.Errorf("the pod's image %q is not the one prebake baked:\n%s", image, stderr.String())
	}
	var props string
	for _, cm := range confMaps {
		if p, ok := cm.Data["spark.properties"]; ok {
			props = p
		}
	}
	if props == "" {
		t.Fatalf("no ConfigMap with spark.properties in %s (%d ConfigMaps)", ns, len(confMaps))
	}
	if !strings.Contains(props, "local\\:///opt/spark/prebake/jars/dev.prebake.demo_greeting-1.0.jar") &&
		!strings.Contains(props, "local:///opt/spark/prebake/jars/dev.prebake.demo_greeting-1.0.jar") {
		t.Errorf("spark.properties lacks the local:// jar:\n%s", props)
	}
	if strings.Contains(props, "spark.jars.packages") {
		t.Errorf("spark.properties still has a packages key:\n%s", props)
	}
}

// baseInRegistry starts a registry holding testdata/base-image's 3.5.0 as
// REG/spark/base:3.5.0 and makes namespace ns; it returns REG and the base.
func (e *itEnv) baseInRegistry(t *testing.T, ns string) (reg, base string) {
	t.Helper()
	reg = startPlainRegistry(t)
	base = reg + "/spark/base:3.5.0"
	pushBaseImage(t, base)
	e.c.ensureNamespace(t, ns)
	return reg, base
}

// startPlainRegistry is the real registry without auth (the run's shared
// one): it returns HOST/PREFIX, the test's own repository prefix on it.
func startPlainRegistry(t *testing.T) string {
	t.Helper()
	return registrytest.Start(t).Repo("")
}

// pushBaseImage pushes testdata/base-image (tag 3.5.0, an index) to ref.
func pushBaseImage(t *testing.T, ref string) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(filepath.Join("..", "..", "testdata", "base-image"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == "3.5.0" {
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.WriteIndex(r, child); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("testdata/base-image has no 3.5.0")
}
