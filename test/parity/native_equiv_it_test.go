package parity

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/k8senv"
	"github.com/prebake/prebake/submit/k8s/native"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

var (
	updateEquiv   = flag.Bool("update-equiv", false, "rewrite submit/k8s/native/testdata/equiv goldens from the real spark-submit")
	equivVersions = flag.String("equiv-versions", "", "comma-separated installed pyspark versions for TestNativeEquivalenceIT (default: testenv.SparkVersions)")
)

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

// equivInputs are the stamp inputs of a native equivalence oracle whose
// test is file: the native rules, cases and goldens (submit/k8s/native),
// what records the bodies sent, and the test.
func equivInputs(file string) []string {
	return []string{"submit/k8s/native", "internal/testenv/k8senv/equiv.go", "internal/testenv/k8senv/proxy.go", file}
}

// caseEnv is the native builder's environment of cs (placeholders
// expanded), as spark-submit's (SparkSubmitEnv) is.
func caseEnv(e *k8senv.Equiv, cs nativetest.Case) map[string]string {
	env := map[string]string{"SPARK_USER": "prebake"}
	for k, v := range cs.Env {
		env[k] = nativetest.Expand([]string{v}, e.Repl)[0]
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
	// changed (issue 43): the native rules and cases, their goldens, this
	// test and the recording of what is sent, the Spark and Kubernetes
	// versions. The unit tier replays the goldens on every run
	// (native.TestEquivalence…); make test-live (PREBAKE_LIVE=1) forces the
	// live run.
	stamp := testenv.NewStamp(t, "submit/k8s/native/testdata/equiv/STAMP", equivInputs("test/parity/native_equiv_it_test.go"),
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
	e := k8senv.NewEquiv(t)
	for _, version := range versions {
		home, _ := testenv.SparkHome(t, version)
		for i, cs := range nativetest.Cases {
			if cs.Only != "" && !strings.HasPrefix(version, cs.Only) {
				continue
			}
			t.Run(version+"/"+cs.Name, func(t *testing.T) {
				t.Parallel() // two at a time by default (-parallel follows GOMAXPROCS)
				ns := fmt.Sprintf("eq-%s-%d", strings.ReplaceAll(version, ".", ""), i)
				e.C.EnsureNamespace(t, ns)
				args := append(nativetest.CommonArgs(ns, version), cs.Args...)
				sentSpark, heldSpark, sentNative, heldNative := bothWays(t, e, home, version, ns, args, cs)

				compareNormalised(t, "objects held by the API server", heldSpark, heldNative, e.Repl)
				compareNormalised(t, "request bodies", sentSpark, sentNative, e.Repl)

				golden := filepath.Join(k8senv.EquivDir(t), version, cs.Name+".json")
				ns1, err := nativetest.Normalise(sentSpark, e.Repl)
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
func bothWays(t *testing.T, e *k8senv.Equiv, home, version, ns string, args []string, cs nativetest.Case) (sentSpark, heldSpark, sentNative, heldNative []map[string]any) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(filepath.Join(home, "bin", "spark-submit"), nativetest.Expand(args, e.Repl)...)
	cmd.Env = e.SparkSubmitEnv(t, home, cs.Env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spark-submit %s: %v\n%s", version, err, out)
	}
	t.Logf("spark-submit %s took %s", version, time.Since(start).Round(time.Millisecond))
	sentSpark = e.Rec.Take(ns)
	heldSpark = readBack(t, e.C.Admin, ns)
	clearNamespace(t, e.C.Admin, ns)

	in, err := nativetest.FromArgv(nativetest.Expand(args, e.Repl), version, caseEnv(e, cs))
	if err != nil {
		t.Fatalf("FromSubmission: %v", err)
	}
	objs, err := native.Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := createInOrder(context.Background(), e.Native, objs); err != nil {
		t.Fatalf("Create: %v", err)
	}
	sentNative = e.Rec.Take(ns)
	heldNative = readBack(t, e.C.Admin, ns)
	clearNamespace(t, e.C.Admin, ns)
	return sentSpark, heldSpark, sentNative, heldNative
}

// createInOrder creates objs as the native submitter does (submit/k8s's
// own creation is unexported; this oracle asks what the native builder
// sends): the driver pod first, then, owned by it, the objects in Spark's
// order (native.Objects.Owned). It stops at the first error.
func createInOrder(ctx context.Context, c kubernetes.Interface, objs *native.Objects) error {
	pod, err := c.CoreV1().Pods(objs.Namespace).Create(ctx, objs.Pod, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	objs.SetOwner(pod)
	core, networking := c.CoreV1().RESTClient(), c.NetworkingV1().RESTClient()
	for _, o := range objs.Owned() {
		kind := native.KindOf(o)
		rc, resource := core, map[string]string{"service": "services", "configmap": "configmaps",
			"persistentvolumeclaim": "persistentvolumeclaims", "networkpolicy": "networkpolicies"}[kind]
		if kind == "networkpolicy" {
			rc = networking
		}
		if resource == "" {
			return fmt.Errorf("no resource for a %s", kind)
		}
		if err := rc.Post().Namespace(objs.Namespace).Resource(resource).Body(o).Do(ctx).Error(); err != nil {
			return fmt.Errorf("creating %s %s: %w", kind, o.GetName(), err)
		}
	}
	return nil
}
