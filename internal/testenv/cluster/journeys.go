package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
)

// What the real-node journeys of every test package share (test/spark,
// submit/k8s): the team's app image, prebake's own image, the driver pod of
// a namespace and a submitter's service account.

// NodeSparkVersion is the Spark of the journeys' driver pods (their base
// image and the spark-submit that submits them).
const NodeSparkVersion = "3.5.9"

// DriverContainer is the driver's container in a Spark driver pod.
const DriverContainer = "spark-kubernetes-driver"

// nodeApp is the driver's main class of the real-node journeys: it calls
// the one class of dev.prebake.demo:greeting:1.0 (testdata/spark-demo; on
// the classpath only when prebake baked it); then, given an exit code, it
// exits with it at once (a failing job, no executor), else it counts a
// range on the executors.
const nodeApp = `import org.apache.spark.sql.SparkSession;

public class NodeApp {
  public static void main(String[] args) throws Exception {
    Object g = Class.forName("dev.prebake.demo.Greeting").getMethod("hello", String.class).invoke(null, "the node");
    System.out.println("NODE APP: " + g);
    if (args.length > 0) System.exit(Integer.parseInt(args[0]));
    SparkSession s = SparkSession.builder().appName("prebake-node").getOrCreate();
    System.out.println("NODE APP: count " + s.range(0, 10, 1, 2).count());
    s.stop();
  }
}
`

// NodeAppRan reports whether the driver's log shows NodeApp ran with the
// baked class (and, when ok, counted on its executors).
func NodeAppRan(log string, ok bool) bool {
	return strings.Contains(log, "NODE APP: hello the node from a jar that prebake resolved") &&
		(!ok || strings.Contains(log, "NODE APP: count 10"))
}

// The images built once per test binary (a failed build fails every test
// that asks for it).
var nodeAppRef, prebakeImageRef testenv.Shared[string]

// NodeAppImage is the team's image of the journeys: the Spark base image
// (NodeSparkVersion) and NodeApp at local:///opt/spark/app/app.jar, built
// once per test binary.
func (c *Cluster) NodeAppImage(t testing.TB) string {
	t.Helper()
	sparkHome, _ := testenv.SparkHome(t, NodeSparkVersion)
	return nodeAppRef.Get(t, func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ref := c.Registry + "/team/node-app:1"
		return ref, c.JavaAppImage(ctx, sparkHome, NodeSparkVersion, "NodeApp", nodeApp, ref)
	})
}

// ImageCache is where hack/image keeps prebake's static binaries by source
// hash for the tests that build prebake's image.
func ImageCache() string { return filepath.Join(testenv.CacheDir(), "prebake-image") }

// PrebakeImage builds prebake's own image (`make image`: hack/image, the
// layers package, no Docker) for linux/amd64 straight into c's registry,
// once per test binary, and returns its reference. The static binary is
// cached by a hash of its sources in ImageCache (hack/image -cache): an
// unchanged tree only pushes the two layers (measured: 276 s with a cold
// binary under load, seconds from the cache).
func (c *Cluster) PrebakeImage(t testing.TB) string {
	t.Helper()
	return prebakeImageRef.Get(t, func() (string, error) {
		root, err := testenv.ModuleRoot()
		if err != nil {
			return "", err
		}
		start := time.Now()
		ref := c.Registry + "/prebake/prebake:it"
		cmd := exec.Command("go", "run", "./hack/image", "-target", ref, "-platforms", "linux/amd64", "-cache", ImageCache())
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("make image (go run ./hack/image -target %s): %v\n%s", ref, err, out)
		}
		t.Logf("prebake's image %s built and pushed in %s", ref, time.Since(start).Round(100*time.Millisecond))
		return ref, nil
	})
}

// SparkConfMap is SparkConf(ns)'s --conf pairs as a map, and its master.
func (c *Cluster) SparkConfMap(ns string) (master string, conf map[string]string) {
	args := c.SparkConf(ns)
	conf = map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--master":
			master = args[i+1]
		case "--conf":
			k, v, _ := strings.Cut(args[i+1], "=")
			conf[k] = v
		}
	}
	return master, conf
}

// SubmitterAccount creates service account name in ns with a Role that
// lets it run a Spark submission there (driver pods, their ConfigMaps and
// Services): what an in-cluster `prebake submit` needs.
func (c *Cluster) SubmitterAccount(ctx context.Context, t testing.TB, ns, name string) {
	t.Helper()
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "configmaps", "services", "persistentvolumeclaims"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// DriverPod returns the one driver pod of ns and its log ("" if none).
func (c *Cluster) DriverPod(ctx context.Context, ns string) (*corev1.Pod, string) {
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=driver"})
	if err != nil || len(pods.Items) != 1 {
		return nil, ""
	}
	p := &pods.Items[0]
	b, _ := c.Client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	return p, string(b)
}

// DriverExitCode is the terminated driver container's exit code, or -1.
func DriverExitCode(p *corev1.Pod) int32 {
	if p == nil {
		return -1
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == DriverContainer && s.State.Terminated != nil {
			return s.State.Terminated.ExitCode
		}
	}
	return -1
}
