package cluster

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/prebake/prebake/internal/testenv"
)

// The kubeflow spark-operator of the tests (hack/infra.d/57-spark-operator.sh):
// its one launcher and the checks of its SparkApplications, for the tests
// against a bare API server (submit/k8s) and on the real node (test/spark).

// SparkAppGVR is kubeflow spark-operator's SparkApplication.
var SparkAppGVR = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// SparkOperatorDir is where hack/infra.d/57-spark-operator.sh installs the
// kubeflow spark-operator controller (spark-operator) and its CRDs (crds/),
// built from the Go module proxy. On a fresh machine .ci/run lets that build
// run on while the tests start: a test waits for it (testenv.WaitForBuild).
func SparkOperatorDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testenv.CacheDir(), "spark-operator-current")
	if !exists(filepath.Join(dir, "spark-operator")) {
		testenv.WaitForBuild(t, filepath.Join(testenv.CacheDir(), "spark-operator.lock"), "the kubeflow spark-operator", testenv.BuildWait)
	}
	if !exists(filepath.Join(dir, "spark-operator")) || !exists(filepath.Join(dir, "crds", "sparkoperator.k8s.io_sparkapplications.yaml")) {
		testenv.Skip(t, "the kubeflow spark-operator is not installed: run hack/infra.sh (hack/infra.d/57-spark-operator.sh)")
	}
	return dir
}

// InstallSparkOperatorCRDs creates the CRDs of dir with cfg's client and waits
// until SparkApplications are served.
func InstallSparkOperatorCRDs(t testing.TB, cfg *rest.Config, dir string) dynamic.NamespaceableResourceInterface {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cfg)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	for _, f := range files {
		var obj map[string]any
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := dyn.Resource(crdGVR).Create(context.Background(), &unstructured.Unstructured{Object: JSONable(obj).(map[string]any)}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating the CRD of %s: %v", filepath.Base(f), err)
		}
	}
	apps := dyn.Resource(SparkAppGVR)
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if _, err := apps.Namespace("default").List(context.Background(), metav1.ListOptions{}); err == nil {
			return apps
		} else if time.Since(start) > 60*time.Second {
			t.Fatalf("SparkApplication CRD not served after 60s: %v", err)
		}
	}
}

// JSONable turns YAML's decoded values into JSON-compatible ones (ints as
// int64, nested maps with string keys) for unstructured.
func JSONable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = JSONable(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = JSONable(e)
		}
		return x
	case int:
		return int64(x)
	}
	return v
}

// OperatorEnv is the environment of prebake and of the operator's
// spark-submit (SPARK_HOME sparkHome) in a fresh directory dir: HOME is
// home (an Ivy directory there is a resolve at submit time), SPARK_CONF_DIR
// and DOCKER_CONFIG are empty directories, and nothing of the machine's
// kubeconfig or prebake configuration is read; the caller appends
// PREBAKE_CACHE.
func OperatorEnv(t testing.TB, sparkHome string) (dir, home string, env []string) {
	t.Helper()
	dir = t.TempDir()
	home = filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "HOME="+home, "SPARK_HOME="+sparkHome, "SPARK_CONF_DIR="+t.TempDir(), "KUBECONFIG=",
		"DOCKER_CONFIG="+t.TempDir(), "PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=", "PREBAKE_CONFIG=")
	return dir, home, env
}

// RewrittenApp is the SparkApplication of a manifest prebake rewrote,
// ready to apply; it is an error of t when the manifest still names one
// of bad, fatal when it is not YAML.
func RewrittenApp(t testing.TB, rewritten string, bad ...string) *unstructured.Unstructured {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(rewritten, b) {
			t.Errorf("the rewritten manifest still has %q:\n%s", b, rewritten)
		}
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(rewritten), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: JSONable(obj).(map[string]any)}
}

// StartSparkOperator runs the kubeflow spark-operator controller of opDir
// as a local process watching namespaces, with env (its spark-submit is
// $SPARK_HOME's) and kubeconfig; server is the API server's URL, which the
// operator gives its spark-submit as the master. It returns the path of
// the operator's log and stops the operator at cleanup.
func StartSparkOperator(t testing.TB, opDir string, env []string, kubeconfig, server string, namespaces ...string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	op := exec.Command(filepath.Join(opDir, "spark-operator"), "controller", "start", "--namespaces="+strings.Join(namespaces, ","),
		"--enable-ui-service=false", "--leader-election=false", "--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(testenv.FreePort(t)), "--controller-threads=2")
	op.Env = append(env, "KUBECONFIG="+kubeconfig, "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port())
	opLog := filepath.Join(t.TempDir(), "spark-operator.log")
	p, err := testenv.StartProcess("spark-operator", opLog, op)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0, 15*time.Second, t.Logf) })
	return opLog
}

// CheckDriverProps checks the spark.properties of the driver's ConfigMap
// in ns (what the operator's spark-submit gave the driver; the executors'
// spark-exec-… ConfigMap holds little): it holds jar
// (a local:// URL of the baked image) and no packages key.
func CheckDriverProps(ctx context.Context, t testing.TB, client kubernetes.Interface, ns, jar string) {
	t.Helper()
	var props string
	for start := time.Now(); props == "" && time.Since(start) < 30*time.Second; time.Sleep(200 * time.Millisecond) {
		l, _ := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		for _, cm := range l.Items {
			if p, ok := cm.Data["spark.properties"]; ok && !strings.HasPrefix(cm.Name, "spark-exec-") {
				props = p
			}
		}
	}
	if !strings.Contains(props, strings.Replace(jar, ":", "\\:", 1)) && !strings.Contains(props, jar) {
		t.Errorf("spark.properties lacks the baked %s:\n%s", jar, props)
	}
	for _, k := range []string{"spark.jars.packages", "spark.jars.repositories", "spark.jars.excludes", "spark.jars.ivy"} {
		if strings.Contains(props, k) {
			t.Errorf("spark.properties still has %s:\n%s", k, props)
		}
	}
}

// NoResolveAtSubmit checks that the operator's spark-submit resolved
// nothing: no Ivy in its log (opLog), no Ivy directory in its home; it
// returns the log.
func NoResolveAtSubmit(t testing.TB, opLog, home string) string {
	t.Helper()
	logb, _ := os.ReadFile(opLog)
	for _, s := range []string{":: resolving dependencies", "Ivy Default Cache set to", "artifacts copied"} {
		if strings.Contains(string(logb), s) {
			t.Errorf("the operator's spark-submit resolved packages (%q in its log)", s)
		}
	}
	for _, d := range []string{".ivy2", ".ivy2.5.2"} {
		if _, err := os.Stat(filepath.Join(home, d)); err == nil {
			t.Errorf("~/%s exists: something resolved at submit time", d)
		}
	}
	return string(logb)
}

// WaitSparkApp waits up to a minute for the one SparkApplication of ns (the
// test playing the operator); nil, an error of t, if none came.
func WaitSparkApp(ctx context.Context, t testing.TB, apps dynamic.NamespaceableResourceInterface, ns string) *unstructured.Unstructured {
	t.Helper()
	for start := time.Now(); time.Since(start) < 60*time.Second; time.Sleep(100 * time.Millisecond) {
		if l, err := apps.Namespace(ns).List(ctx, metav1.ListOptions{}); err == nil && len(l.Items) > 0 {
			return &l.Items[0]
		}
	}
	t.Errorf("no SparkApplication in %s after 60s", ns)
	return nil
}

// SetAppStatus sets the status of SparkApplication ns/name as the
// operator does: the state, and the driver pod and error message when not
// empty. It reports whether it could.
func SetAppStatus(ctx context.Context, t testing.TB, apps dynamic.NamespaceableResourceInterface, ns, name, state, pod, msg string) bool {
	t.Helper()
	cur, err := apps.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return false
	}
	_ = unstructured.SetNestedField(cur.Object, state, "status", "applicationState", "state")
	for path, v := range map[string]string{"driverInfo.podName": pod, "applicationState.errorMessage": msg} {
		if v != "" {
			_ = unstructured.SetNestedField(cur.Object, v, append([]string{"status"}, strings.Split(path, ".")...)...)
		}
	}
	if _, err := apps.Namespace(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Error(err)
		return false
	}
	return true
}

// AppState is a SparkApplication's status.applicationState.state, "" when
// it cannot be read.
func AppState(ctx context.Context, apps dynamic.NamespaceableResourceInterface, ns, name string) string {
	u, err := apps.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, "status", "applicationState", "state")
	return s
}
