package parity

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/k8senv"
)

// TestSparkOperatorRealIT: a SparkApplication with spec.deps.packages (and
// a sparkConf packages key) goes through `prebake rewrite --manifest
// --image-from` (the image baked by `prebake bake image` into a real
// registry), is applied to the real kube-apiserver with the operator's own
// CRDs (kubeflow spark-operator v2.3.0, from the Go module proxy), and the
// real operator controller submits it with the real spark-submit (a local
// process whose SPARK_HOME is pyspark 3.5.9's: the operator image would
// carry Spark). The driver pod the operator's spark-submit creates runs the
// baked image, its spark.properties holds the local:// jar and no packages
// key, and neither the operator's spark-submit nor anything else resolved
// (no Ivy in its log, no ~/.ivy2). With no node, the test kubelet ends the
// driver with exit 0; `prebake submit --status-poll-only` follows the driver
// pod to that end (exit 0) and the operator marks the SparkApplication
// COMPLETED.
//
// A live oracle (issue 43): what it asks of the real operator changes only
// with the operator (.ci/spark-operator's module, the controller
// hack/infra.d/57-spark-operator.sh builds), the manifest rewrite it drives
// (submit/rewrite, cmd/rewrite.go), its helpers
// (internal/testenv/cluster/operator.go), this test and the Spark and
// Kubernetes versions; it runs again when the stamp of those
// (testdata/parity/operator/STAMP) changed, or under PREBAKE_LIVE=1
// (make test-live), and a pass records the stamp. The real node's operator
// journey (test/spark's TestSparkOperatorNodeIT) runs in every make test.
func TestSparkOperatorRealIT(t *testing.T) {
	testenv.RequireIT(t)
	const sparkVersion = "3.5.9"
	stamp := testenv.NewStamp(t, "testdata/parity/operator/STAMP",
		[]string{".ci/spark-operator/go.mod", ".ci/spark-operator/go.sum", "hack/infra.d/57-spark-operator.sh",
			"submit/rewrite", "cmd/rewrite.go", "internal/testenv/cluster/operator.go", "test/parity/operator_real_it_test.go"},
		"kube-apiserver "+k8scluster.Version, "pyspark "+sparkVersion)
	if stamp.Fresh() {
		t.Logf("inputs unchanged since the last live run (stamp %.12s): the operator's answer stands; make test-live re-asks it", stamp)
		return
	}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		if err := stamp.Record(); err != nil {
			t.Error(err)
			return
		}
		t.Logf("live run passed: stamp %.12s recorded (commit it)", stamp)
	})
	sparkHome, _ := testenv.SparkHome(t, sparkVersion)
	opDir := k8scluster.SparkOperatorDir(t)
	// A private control plane: the operator's own SparkApplication CRD
	// (the shared cluster serves the schemaless test CRD of that name) and
	// its controller, with the test kubelet as the node.
	c := k8senv.Start(t)
	k := k8senv.StartKubelet(t, c)
	apps := k8scluster.InstallSparkOperatorCRDs(t, c.RESTConfig(), filepath.Join(opDir, "crds"))
	ns := "op-real"
	reg, base := k8senv.BaseInRegistry(t, c, ns)
	dir, home, env := k8scluster.OperatorEnv(t, sparkHome)
	env = append(env, "PREBAKE_CACHE="+filepath.Join(dir, "cache"))
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	demoRepo := "file://" + filepath.Join(root, "testdata", "spark-demo", "repo") + "/"
	prebake := testenv.Prebake(t)
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(prebake, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	// Bake, then rewrite the manifest against the baked image.
	out, stderr, err := run("bake", "image", "-o", "json", "--base", base, "--target", reg+"/spark/prebaked",
		"--no-default-repositories", "--repositories", demoRepo, "--packages", "dev.prebake.demo:greeting:1.0")
	if err != nil {
		t.Fatalf("prebake bake image: %v\n%s", err, stderr)
	}
	var baked struct{ Ref string }
	if err := json.Unmarshal([]byte(out), &baked); err != nil || baked.Ref == "" {
		t.Fatalf("bake image -o json: %v\n%s", err, out)
	}
	manifest := filepath.Join(dir, "app.yaml")
	testenv.WriteFile(t, manifest, `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: prebake-op
  namespace: `+ns+`
spec:
  type: Scala
  mode: cluster
  sparkVersion: 3.5.9
  image: `+base+`
  mainClass: Main
  mainApplicationFile: local:///opt/app/app.jar
  arguments: [arg1]
  restartPolicy: {type: Never}
  sparkConf:
    spark.jars.ivy: /tmp/ivy
    spark.jars.excludes: org.slf4j:slf4j-api
    spark.ui.enabled: "false"
  deps:
    repositories: [`+demoRepo+`]
    packages: [dev.prebake.demo:greeting:1.0]
  driver: {cores: 1, memory: 512m, serviceAccount: spark}
  executor: {instances: 1, cores: 1, memory: 512m}
`)
	rewritten, stderr, err := run("rewrite", "--no-default-repositories", "--manifest", manifest, "--image-from", baked.Ref)
	if err != nil {
		t.Fatalf("prebake rewrite --manifest: %v\n%s", err, stderr)
	}
	sa := k8scluster.RewrittenApp(t, rewritten, "packages", "spark.jars.ivy", "spark.jars.excludes", "repositories")

	// The operator: a local process with pyspark's spark-submit.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	c.WriteKubeconfig(t, kubeconfig)
	opLog := k8scluster.StartSparkOperator(t, opDir, env, kubeconfig, c.URL, ns)

	ctx := context.Background()
	applied := time.Now()
	if _, err := apps.Namespace(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("applying the rewritten SparkApplication: %v", err)
	}
	// The operator's spark-submit (a JVM on a busy machine) makes the pod.
	pod := ""
	for start := time.Now(); pod == "" && time.Since(start) < 5*time.Minute; time.Sleep(500 * time.Millisecond) {
		l, err := c.Admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=driver"})
		if err == nil && len(l.Items) > 0 {
			pod = l.Items[0].Name
		}
	}
	if pod == "" {
		t.Fatalf("no driver pod in %s after 5m; operator log:\n%s", ns, testenv.TailFile(opLog, 60))
	}
	t.Logf("the operator's spark-submit made driver pod %s/%s %s after the apply", ns, pod, time.Since(applied).Round(100*time.Millisecond))
	driver, err := c.Admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := driver.Spec.Containers[0].Image; img != baked.Ref {
		t.Errorf("driver pod image %q; want the baked %q", img, baked.Ref)
	}
	k8scluster.CheckDriverProps(ctx, t, c.Admin, ns, "local:///opt/spark/prebake/jars/dev.prebake.demo_greeting-1.0.jar")

	// The SparkApplication names its driver pod (status.driverInfo.podName):
	// prebake follows that pod, while the test kubelet runs it to a
	// successful end.
	for start := time.Now(); time.Since(start) < 60*time.Second; time.Sleep(300 * time.Millisecond) {
		u, err := apps.Namespace(ns).Get(ctx, "prebake-op", metav1.GetOptions{})
		if err != nil {
			continue
		}
		if p, _, _ := unstructured.NestedString(u.Object, "status", "driverInfo", "podName"); p != "" {
			if p != pod {
				t.Errorf("SparkApplication status.driverInfo.podName %q; the driver pod is %q", p, pod)
			}
			break
		}
	}
	tokenFile := filepath.Join(dir, "token")
	testenv.WriteFile(t, tokenFile, c.AdminToken)
	follow := make(chan error, 1)
	var fout, ferr bytes.Buffer
	go func() {
		cmd := exec.Command(prebake, "submit", "-o", "json", "--poll-interval", "200ms", "--status-poll-only", ns+":"+pod, "--",
			"--master", "k8s://"+c.URL, "--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+tokenFile,
			"--conf", "spark.kubernetes.authenticate.submission.caCertFile="+c.CAFile)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = &fout, &ferr
		follow <- cmd.Run()
	}()
	time.Sleep(time.Second)
	k.RunToEnd(t, ns, pod, []string{"INFO SparkContext: Running Spark version 3.5.9", "GREETING: hello"},
		k8senv.PhaseWith(corev1.PodSucceeded, corev1.ContainerStatus{Name: k8senv.DriverContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}))
	select {
	case err := <-follow:
		if err != nil {
			t.Errorf("prebake submit --status-poll-only: %v\nstdout:\n%s\nstderr:\n%s", err, fout.String(), ferr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Errorf("prebake did not see the driver's end within 2m:\n%s", ferr.String())
	}
	state := ""
	for start := time.Now(); time.Since(start) < 90*time.Second; time.Sleep(500 * time.Millisecond) {
		u, err := apps.Namespace(ns).Get(ctx, "prebake-op", metav1.GetOptions{})
		if err == nil {
			state, _, _ = unstructured.NestedString(u.Object, "status", "applicationState", "state")
			if state == "COMPLETED" {
				break
			}
		}
	}
	t.Logf("SparkApplication state %s, %s after the apply; driver image %s", state, time.Since(applied).Round(100*time.Millisecond), driver.Spec.Containers[0].Image)
	if state != "COMPLETED" {
		t.Errorf("SparkApplication state %q; want COMPLETED; operator log:\n%s", state, testenv.TailFile(opLog, 40))
	}
	logb := k8scluster.NoResolveAtSubmit(t, opLog, home)
	submitLine := ""
	for _, l := range strings.Split(logb, "\n") {
		if strings.Contains(l, "Running spark-submit") {
			submitLine = l
		}
	}
	if submitLine == "" {
		t.Fatalf("the operator never ran spark-submit:\n%s", testenv.TailFile(opLog, 40))
	}
	if strings.Contains(submitLine, "--packages") || strings.Contains(submitLine, "spark.jars.packages") || !strings.Contains(submitLine, "local:///opt/spark/prebake/jars/dev.prebake.demo_greeting-1.0.jar") {
		t.Errorf("the operator's spark-submit arguments: %s", submitLine)
	}
}
