package k8s

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/submit/k8s/native"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

var (
	updateEquiv   = flag.Bool("update-equiv", false, "rewrite submit/k8s/native/testdata/equiv goldens from the real spark-submit")
	equivVersions = flag.String("equiv-versions", "", "comma-separated installed pyspark versions for TestNativeEquivalenceIT (default: testenv.SparkVersions)")
)

// equivDir is where the goldens and the cases' files live.
func equivDir(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "native", "testdata", "equiv")
}

// writeRecorder collects the object bodies sent to the API server, by
// namespace.
type writeRecorder struct {
	mu   sync.Mutex
	objs map[string][]map[string]any
}

var objectPath = regexp.MustCompile(`^/(?:api/v1|apis/networking\.k8s\.io/v1)/namespaces/([^/]+)/(pods|services|configmaps|persistentvolumeclaims|networkpolicies)(/[^/]+)?$`)

func (w *writeRecorder) record(method, path string, body []byte) {
	m := objectPath.FindStringSubmatch(path)
	if m == nil {
		return
	}
	var obj map[string]any
	if err := yaml.Unmarshal(body, &obj); err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.objs == nil {
		w.objs = map[string][]map[string]any{}
	}
	w.objs[m[1]] = append(w.objs[m[1]], obj)
}

func (w *writeRecorder) take(ns string) []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.objs[ns]
	delete(w.objs, ns)
	return out
}

// readBack lists what is in ns, in creation order: pods, then the owned
// objects by kind.
func readBack(t testing.TB, c kubernetes.Interface, ns string) []map[string]any {
	t.Helper()
	ctx := context.Background()
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nps, err := c.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var objs []any
	for i := range pods.Items {
		pods.Items[i].APIVersion, pods.Items[i].Kind = "v1", "Pod"
		objs = append(objs, &pods.Items[i])
	}
	for i := range svcs.Items {
		svcs.Items[i].APIVersion, svcs.Items[i].Kind = "v1", "Service"
		// The cluster IP the server allocates is "None" for both; the
		// families depend on the policy, kept.
		objs = append(objs, &svcs.Items[i])
	}
	for i := range nps.Items {
		nps.Items[i].APIVersion, nps.Items[i].Kind = "networking.k8s.io/v1", "NetworkPolicy"
		objs = append(objs, &nps.Items[i])
	}
	for i := range pvcs.Items {
		pvcs.Items[i].APIVersion, pvcs.Items[i].Kind = "v1", "PersistentVolumeClaim"
		objs = append(objs, &pvcs.Items[i])
	}
	for i := range cms.Items {
		if cms.Items[i].Name == "kube-root-ca.crt" {
			continue
		}
		cms.Items[i].APIVersion, cms.Items[i].Kind = "v1", "ConfigMap"
		objs = append(objs, &cms.Items[i])
	}
	maps, err := nativetest.ToMaps(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return maps
}

// clearNamespace deletes the objects of ns (pods at once: no kubelet).
func clearNamespace(t testing.TB, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	zero := int64(0)
	all := metav1.ListOptions{}
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	// No controller removes the pvc-protection finalizer here.
	pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pvcs.Items {
		p.Finalizers = nil
		if _, err := c.CoreV1().PersistentVolumeClaims(ns).Update(ctx, &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{
		c.CoreV1().Pods(ns).DeleteCollection(ctx, opts, all),
		c.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, opts, all),
		c.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, opts, all),
		c.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, opts, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	svcs, err := c.CoreV1().Services(ns).List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		if err := c.CoreV1().Services(ns).Delete(ctx, s.Name, opts); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(readBack(t, c, ns)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s not empty after 30s", ns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type equivEnv struct {
	c      *testCluster
	p      *faultProxy
	rec    *writeRecorder
	tmp    string
	files  string
	native kubernetes.Interface
	repl   map[string]string
}

func newEquivEnv(t testing.TB) *equivEnv {
	t.Helper()
	c := sharedCluster(t)
	e := &equivEnv{c: c, rec: &writeRecorder{}, tmp: t.TempDir(), files: filepath.Join(equivDir(t), "files")}
	e.p = startFaultProxy(t, c, nil)
	e.p.onWrite = e.rec.record
	ca, err := os.ReadFile(e.p.caFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.tmp, "ca.crt"), string(ca))
	writeFile(t, filepath.Join(e.tmp, "token"), c.adminToken)
	e.native = kubernetes.NewForConfigOrDie(&rest.Config{Host: e.p.url, BearerToken: c.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: e.p.caFile}, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	e.repl = map[string]string{nativetest.Master: e.p.url, nativetest.TestData: e.files, nativetest.Tmp: e.tmp}
	return e
}

// sparkSubmitEnv is the real spark-submit's environment: its Spark home,
// a fresh HOME (no kubeconfig), a fixed SPARK_USER and the case's extras.
func (e *equivEnv) sparkSubmitEnv(t testing.TB, home string, extra map[string]string) []string {
	env := []string{"SPARK_HOME=" + home, "HOME=" + t.TempDir(), "SPARK_USER=prebake", "PATH=" + os.Getenv("PATH"),
		"KUBECONFIG=" + filepath.Join(e.tmp, "no-kubeconfig")}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		env = append(env, "JAVA_HOME="+jh)
	}
	for k, v := range extra {
		env = append(env, k+"="+nativetest.Expand([]string{v}, e.repl)[0])
	}
	return env
}

func (e *equivEnv) caseEnv(cs nativetest.Case) map[string]string {
	env := map[string]string{"SPARK_USER": "prebake"}
	for k, v := range cs.Env {
		env[k] = nativetest.Expand([]string{v}, e.repl)[0]
	}
	return env
}

// TestNativeEquivalenceIT submits every case with the real spark-submit of
// each installed Spark line and with the native builder, against the real
// kube-apiserver, and compares what each sent and what the server holds,
// after normalising the random parts. The goldens (what spark-submit sent)
// are checked live too, or rewritten with -update-equiv.
func TestNativeEquivalenceIT(t *testing.T) {
	testenv.NeedJVM(t)
	versions := testenv.SparkVersions
	if *equivVersions != "" {
		versions = strings.Split(*equivVersions, ",")
	}
	// A live oracle re-asks the real spark-submit only when what it asks
	// changed (issue 43): the native rules and cases, their goldens, the
	// submitter's code, this test, the Spark and Kubernetes versions. The
	// unit tier replays the goldens on every run (native.TestEquivalence…);
	// make test-live (PREBAKE_LIVE=1) forces the live run.
	stamp := testenv.NewStamp(t, "submit/k8s/native/testdata/equiv/STAMP",
		[]string{"submit/k8s/native", "submit/k8s/*.go", "submit/k8s/native_equiv_it_test.go"},
		append([]string{"kube-apiserver " + cluster.Version}, versions...)...)
	if *equivVersions == "" && !*updateEquiv && stamp.Fresh() {
		t.Logf("inputs unchanged since the last live run (stamp %.12s): the goldens stand; make test-live re-asks spark-submit", stamp)
		return
	}
	t.Cleanup(func() { // after the parallel subtests
		if !t.Failed() && *equivVersions == "" {
			if err := stamp.Record(); err != nil {
				t.Error(err)
			}
			t.Logf("live run passed: stamp %.12s recorded (commit it with the goldens)", stamp)
		}
	})
	e := newEquivEnv(t)
	for _, version := range versions {
		home, _ := testenv.SparkHome(t, version)
		for i, cs := range nativetest.Cases {
			if cs.Only != "" && !strings.HasPrefix(version, cs.Only) {
				continue
			}
			t.Run(version+"/"+cs.Name, func(t *testing.T) {
				t.Parallel() // two at a time by default (-parallel follows GOMAXPROCS)
				ns := fmt.Sprintf("eq-%s-%d", strings.ReplaceAll(version, ".", ""), i)
				e.c.ensureNamespace(t, ns)
				args := append(nativetest.CommonArgs(ns, version), cs.Args...)
				sentSpark, heldSpark, sentNative, heldNative := e.bothWays(t, home, version, ns, args, cs)

				compareNormalised(t, "objects held by the API server", heldSpark, heldNative, e.repl)
				compareNormalised(t, "request bodies", sentSpark, sentNative, e.repl)

				golden := filepath.Join(equivDir(t), version, cs.Name+".json")
				ns1, err := nativetest.Normalise(sentSpark, e.repl)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, golden, &nativetest.Golden{Case: cs.Name, SparkVersion: version, Namespace: ns, Args: args, Env: cs.Env, Objects: ns1})
			})
		}
	}
}

// checkGolden writes g to golden with -update-equiv, else compares it with
// what golden holds.
func checkGolden(t testing.TB, golden string, g *nativetest.Golden) {
	t.Helper()
	if *updateEquiv {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := nativetest.WriteGolden(golden, g); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := nativetest.ReadGolden(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-equiv to record it)", err)
	}
	if diff := cmp.Diff(roundTrip(t, want), roundTrip(t, g)); diff != "" {
		t.Errorf("spark-submit %s no longer matches its golden %s (-golden +live):\n%s", g.SparkVersion, golden, diff)
	}
}

// roundTrip makes a golden comparable with a freshly built one (JSON
// numbers, nil vs empty).
func roundTrip(t testing.TB, g *nativetest.Golden) map[string]any {
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func compareNormalised(t testing.TB, what string, spark, nat []map[string]any, repl map[string]string, opts ...nativetest.NormaliseOption) {
	t.Helper()
	a, err := nativetest.Normalise(spark, repl, opts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := nativetest.Normalise(nat, repl, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("%s differ (-spark-submit +native):\n%s", what, diff)
	}
}

// bothWays submits args in ns with the real spark-submit of home and with
// the native builder of version: what each sent to the API server and what
// the server then held, the namespace emptied after each.
func (e *equivEnv) bothWays(t *testing.T, home, version, ns string, args []string, cs nativetest.Case) (sentSpark, heldSpark, sentNative, heldNative []map[string]any) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(filepath.Join(home, "bin", "spark-submit"), nativetest.Expand(args, e.repl)...)
	cmd.Env = e.sparkSubmitEnv(t, home, cs.Env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spark-submit %s: %v\n%s", version, err, out)
	}
	t.Logf("spark-submit %s took %s", version, time.Since(start).Round(time.Millisecond))
	sentSpark = e.rec.take(ns)
	heldSpark = readBack(t, e.c.admin, ns)
	clearNamespace(t, e.c.admin, ns)

	in, err := nativetest.FromArgv(nativetest.Expand(args, e.repl), version, e.caseEnv(cs))
	if err != nil {
		t.Fatalf("FromSubmission: %v", err)
	}
	objs, err := native.Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if _, err := createObjects(context.Background(), e.native, objs); err != nil {
		t.Fatalf("Create: %v", err)
	}
	sentNative = e.rec.take(ns)
	heldNative = readBack(t, e.c.admin, ns)
	clearNamespace(t, e.c.admin, ns)
	return sentSpark, heldSpark, sentNative, heldNative
}
