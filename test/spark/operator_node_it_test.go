package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
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
	"github.com/prebake/prebake/submit/k8s"
)

// noMavenFromSpark checks the counting proxy in front of the Maven
// repository: every request is prebake's (Go's User-Agent, from the host on
// the node's address) and came before the driver pod was created; none from
// the operator's spark-submit (a JVM: Java's or Ivy's User-Agent), the
// driver or the executors (a pod's address).
func noMavenFromSpark(t *testing.T, maven *testenv.Proxy, driver *corev1.Pod) {
	t.Helper()
	for _, r := range maven.Requests() {
		if !prebakesResolve(r, driver) {
			t.Errorf("a Maven request that is not prebake's resolve: %+v (driver pod %s created %s)", r, driver.Name, driver.CreationTimestamp)
		}
	}
}

// prebakesResolve reports whether r is prebake's own (its User-Agent, from
// the host on the node's address) and came before driver was created.
func prebakesResolve(r testenv.ProxyRequest, driver *corev1.Pod) bool {
	created := driver.CreationTimestamp.Add(time.Second) // second precision
	return strings.HasPrefix(r.UserAgent, "prebake/") && r.RemoteIP == k8scluster.NodeIP && !r.At.After(created)
}

// TestSparkOperatorNodeIT: the real kubeflow spark-operator v2.3.0 (its
// controller from the Go module proxy, its own CRDs) on the real node
// (kubelet + containerd, the Spark 3.5.9 image): the operator's spark-submit
// (pyspark's) creates the driver pod, the driver and its executor run as
// real containers, and prebake follows the SparkApplication to its end.
//
//   - `prebake submit --via operator --image-target … -- … --packages
//     dev.prebake.demo:greeting:1.0` resolves through a counting proxy,
//     bakes the package onto the team's image, creates the SparkApplication
//     and follows its status.applicationState to COMPLETED: exit 0, the
//     driver ran the baked class and counted on its executor.
//   - the same with the app exiting 3: FAILED, prebake exits 3 (the driver
//     container's exit code).
//   - a manifest with spec.deps.packages and sparkConf packages keys
//     (spark.jars.repositories, spark.jars.ivy) → `prebake bake image`,
//     `prebake rewrite --manifest --image-from`, applied: COMPLETED, and
//     `prebake submit --status-poll-only` on the driver pod exits 0.
//
// After prebake's resolve the proxy sees 0 requests: none from the
// operator's spark-submit, the driver or the executors.
func TestSparkOperatorNodeIT(t *testing.T) {
	testenv.RequireIT(t)
	sparkHome, _ := testenv.SparkHome(t, k8scluster.NodeSparkVersion)
	opDir := k8scluster.SparkOperatorDir(t)
	c := k8scluster.Start(t)
	app := c.NodeAppImage(t)
	prebake := prebakeBin
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	apps := k8scluster.InstallSparkOperatorCRDs(t, c.Config, filepath.Join(opDir, "crds"))
	nss := []string{"op-node-ok", "op-node-fail", "op-node-manifest"}
	for _, ns := range nss {
		if err := c.SparkNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	// The Maven repository (testdata/spark-demo/repo over http), behind a
	// counting proxy on the node's address, where the pods could reach it.
	repoDir, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "spark-demo", "repo"))
	if err != nil {
		t.Fatal(err)
	}
	repo := httptest.NewServer(http.FileServer(http.Dir(repoDir)))
	t.Cleanup(repo.Close)
	maven := testenv.CountingProxy(t, repo.URL+"/", testenv.ProxyListen(k8scluster.NodeIP+":0"))

	dir, home, env := k8scluster.OperatorEnv(t, sparkHome)
	env = append(env, "PREBAKE_CACHE=")
	cache := filepath.Join(dir, "cache")
	run := func(args ...string) (string, string, int) {
		cmd := exec.CommandContext(ctx, prebake, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	}
	opLog := k8scluster.StartSparkOperator(t, opDir, env, c.Kubeconfig, c.Server, nss...)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(c.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	// submitArgs is spark-submit's part of a submission to the node: its
	// conf, one executor, the submission token, the team's image.
	submitArgs := func(ns string, appArgs ...string) []string {
		args := append(c.SparkConf(ns), "--name", ns, "--class", "NodeApp",
			"--conf", "spark.executor.instances=1",
			"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+tokenFile,
			"--conf", "spark.kubernetes.container.image="+app)
		return append(append(args, "--packages", "dev.prebake.demo:greeting:1.0", "local:///opt/spark/app/app.jar"), appArgs...)
	}
	// ended checks a driver pod that ran on the node, its image the baked
	// one, with the driver exit code want and the baked class on its
	// classpath.
	ended := func(t *testing.T, ns string, want int32) *corev1.Pod {
		t.Helper()
		pod, log := c.DriverPod(ctx, ns)
		if pod == nil {
			t.Fatalf("no single driver pod in %s; operator log:\n%s", ns, testenv.TailFile(opLog, 40))
		}
		if pod.Spec.NodeName != k8scluster.NodeName {
			t.Errorf("driver pod %s on node %q, want %s", pod.Name, pod.Spec.NodeName, k8scluster.NodeName)
		}
		if img := pod.Spec.Containers[0].Image; !strings.HasPrefix(img, c.Registry+"/") || img == app {
			t.Errorf("driver pod image %s; want the one prebake baked into %s", img, c.Registry)
		}
		if got := k8scluster.DriverExitCode(pod); got != want {
			t.Errorf("driver exit code %d, want %d", got, want)
		}
		if !k8scluster.NodeAppRan(log, want == 0) {
			t.Errorf("the driver did not run the baked class:\n%s", log)
		}
		k8scluster.CheckDriverProps(ctx, t, c.Client, ns, "local:///opt/spark/prebake/jars/dev.prebake.demo_greeting-1.0.jar")
		noMavenFromSpark(t, maven, pod)
		return pod
	}

	for _, tc := range []struct {
		name, ns string
		appArgs  []string
		code     int
		state    string
	}{
		{"via operator succeeds", nss[0], nil, 0, "COMPLETED"},
		{"via operator fails with the driver's code", nss[1], []string{"3"}, 3, "FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maven.Count()
			start := time.Now()
			args := append([]string{"submit", "-o", "json", "--via", "operator", "--spark-version", k8scluster.NodeSparkVersion,
				"--image-target", c.Registry + "/op-jobs", "--cache", cache, "--poll-interval", "1s",
				"--no-default-repositories", "--repositories", maven.URL, "--"}, submitArgs(tc.ns, tc.appArgs...)...)
			out, stderr, code := run(args...)
			took := time.Since(start)
			var r k8s.Result
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("prebake submit -o json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, out, stderr)
			}
			if code != tc.code || r.DriverExitCode == nil || *r.DriverExitCode != tc.code || r.Phase != tc.state {
				t.Errorf("prebake exit %d, result driverExitCode %v phase %q; want %d, %d, %s\nstdout:\n%s\nstderr:\n%s\noperator log:\n%s",
					code, r.DriverExitCode, r.Phase, tc.code, tc.code, tc.state, out, stderr, testenv.TailFile(opLog, 40))
			}
			if !strings.Contains(stderr, "SparkApplication "+tc.ns+"/") {
				t.Errorf("prebake did not report the SparkApplication's states:\n%s", stderr)
			}
			ended(t, tc.ns, int32(tc.code))
			if s := k8scluster.AppState(ctx, apps, tc.ns, strings.TrimSuffix(r.Pod, "-driver")); s != tc.state {
				t.Errorf("SparkApplication state %q, want %s", s, tc.state)
			}
			t.Logf("%s: prebake submit --via operator exit %d in %s (resolve, bake, operator, driver; SparkApplication created after %.1fs, then %.1fs pending, %.1fs running); %d Maven requests (all prebake's)",
				tc.ns, code, took.Round(100*time.Millisecond), r.Timings.SubmitSeconds, r.Timings.PendingSeconds, r.Timings.RunSeconds, maven.Count()-before)
		})
	}

	t.Run("rewrite --manifest, applied", func(t *testing.T) {
		ns := nss[2]
		before := maven.Count()
		start := time.Now()
		out, stderr, code := run("bake", "image", "-o", "json", "--base", app, "--target", c.Registry+"/op-manifest", "--cache", cache,
			"--no-default-repositories", "--repositories", maven.URL, "dev.prebake.demo:greeting:1.0")
		var baked struct{ Ref string }
		if err := json.Unmarshal([]byte(out), &baked); code != 0 || err != nil || baked.Ref == "" {
			t.Fatalf("prebake bake image: exit %d, %v\n%s\n%s", code, err, out, stderr)
		}
		manifest := filepath.Join(dir, "app.yaml")
		if err := os.WriteFile(manifest, []byte(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: prebake-op-manifest
  namespace: `+ns+`
spec:
  type: Java
  mode: cluster
  sparkVersion: `+k8scluster.NodeSparkVersion+`
  image: `+app+`
  mainClass: NodeApp
  mainApplicationFile: local:///opt/spark/app/app.jar
  restartPolicy: {type: Never}
  sparkConf:
    spark.jars.repositories: `+maven.URL+`
    spark.jars.ivy: /tmp/ivy
    spark.kubernetes.driver.request.cores: 200m
    spark.kubernetes.executor.request.cores: 200m
    spark.ui.enabled: "false"
  deps:
    packages: [dev.prebake.demo:greeting:1.0]
  driver: {cores: 1, memory: 512m, serviceAccount: spark}
  executor: {instances: 1, cores: 1, memory: 512m}
`), 0o600); err != nil {
			t.Fatal(err)
		}
		rewritten, stderr, code := run("rewrite", "--no-default-repositories", "--manifest", manifest, "--image-from", baked.Ref)
		if code != 0 {
			t.Fatalf("prebake rewrite --manifest: exit %d\n%s", code, stderr)
		}
		sa := k8scluster.RewrittenApp(t, rewritten, "packages", "spark.jars.ivy", "spark.jars.repositories")
		resolved := maven.Count() - before
		if _, err := apps.Namespace(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatalf("applying the rewritten SparkApplication: %v", err)
		}
		applied := time.Now()
		pod := ""
		for pod == "" && time.Since(applied) < 5*time.Minute {
			u, err := apps.Namespace(ns).Get(ctx, "prebake-op-manifest", metav1.GetOptions{})
			if err == nil {
				pod, _, _ = unstructured.NestedString(u.Object, "status", "driverInfo", "podName")
			}
			time.Sleep(500 * time.Millisecond)
		}
		if pod == "" {
			t.Fatalf("the SparkApplication names no driver pod after 5m; operator log:\n%s", testenv.TailFile(opLog, 40))
		}
		out, stderr, code = run("submit", "-o", "json", "--poll-interval", "1s", "--status-poll-only", ns+":"+pod, "--",
			"--master", "k8s://"+c.Server, "--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+tokenFile, "--conf", "spark.kubernetes.authenticate.submission.caCertFile="+c.CAFile)
		if code != 0 {
			t.Errorf("prebake submit --status-poll-only %s:%s: exit %d\n%s\n%s", ns, pod, code, out, stderr)
		}
		p := ended(t, ns, 0)
		if img := p.Spec.Containers[0].Image; img != baked.Ref {
			t.Errorf("driver pod image %s, want the baked %s", img, baked.Ref)
		}
		state := ""
		for time.Since(applied) < 8*time.Minute {
			if state = k8scluster.AppState(ctx, apps, ns, "prebake-op-manifest"); state == "COMPLETED" || state == "FAILED" {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if state != "COMPLETED" {
			t.Errorf("SparkApplication state %q, want COMPLETED; operator log:\n%s", state, testenv.TailFile(opLog, 40))
		}
		if maven.Count()-before != resolved {
			t.Errorf("%d Maven requests after prebake's bake and rewrite", maven.Count()-before-resolved)
		}
		t.Logf("%s: bake + rewrite + apply to COMPLETED in %s (%s after the apply); %d Maven requests by prebake, 0 after",
			ns, time.Since(start).Round(100*time.Millisecond), time.Since(applied).Round(100*time.Millisecond), resolved)
	})

	k8scluster.NoResolveAtSubmit(t, opLog, home)
	t.Logf("Maven proxy: %d requests in all, every one prebake's resolve", maven.Count())
}
