package parity

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/k8senv"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

// linesDir holds the per-line goldens (one per patch) and their STAMP.
func linesDir(t testing.TB) string {
	return filepath.Join(filepath.Dir(k8senv.EquivDir(t)), "equiv-lines")
}

// TestNativeLinesEquivalenceIT submits nativetest.LinesCase once with the
// real spark-submit of the oldest and newest patch of each Spark line
// (testenv.SparkLinePatches: 3.5.0/3.5.9, 4.0.0/4.0.5, 4.1.0/4.1.4,
// 4.2.0/4.2.1, 4.3.0) and once with the native builder, against the real
// kube-apiserver: what each sent and what the server holds must be equal
// after normalisation, empty spark.properties values included (3.5.7+
// writes spark.submit.pyFiles= for a jar application), env, volumes and
// volumeMounts in the order sent (not sorted). The goldens
// (testdata/equiv-lines/<version>.json) are checked live too, or rewritten
// with -update-equiv. The patches .ci/run installs (3.5.9, 4.0.5, 4.3.0:
// testenv.CISparkVersions) must be there (a skip is a failure under CI);
// another runs when installed and is skipped when not, unless
// PREBAKE_SPARK_LINES=all (make native-lines installs and runs them all).
//
// A live oracle (issue 43): it re-asks spark-submit only when the stamp of
// its inputs (the native rules, cases and goldens, this test, the patches
// and the Kubernetes version) changed since testdata/equiv-lines/STAMP,
// or under PREBAKE_LIVE=1 (make test-live) or PREBAKE_SPARK_LINES=all. A
// passing live run records the stamp when every patch CI installs ran.
func TestNativeLinesEquivalenceIT(t *testing.T) {
	testenv.NeedJVM(t)
	stamp := testenv.NewStamp(t, "submit/k8s/native/testdata/equiv-lines/STAMP", equivInputs("test/parity/native_lines_it_test.go"),
		append([]string{"kube-apiserver " + cluster.Version}, testenv.SparkLinePatches...)...)
	if !*updateEquiv && !testenv.AllSparkLines() && stamp.Fresh() {
		t.Logf("inputs unchanged since the last live run (stamp %.12s): the goldens stand; make test-live re-asks spark-submit", stamp)
		return
	}
	var mu sync.Mutex
	var ran []string
	t.Cleanup(func() { // after the parallel subtests
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() {
			return
		}
		for _, v := range testenv.CISparkVersions() {
			if slices.Contains(testenv.SparkLinePatches, v) && !slices.Contains(ran, v) {
				t.Logf("pyspark %s did not run: stamp not recorded", v)
				return
			}
		}
		if err := stamp.Record(); err != nil {
			t.Error(err)
		}
		t.Logf("live run passed (%s): stamp %.12s recorded (commit it with the goldens)", strings.Join(ran, ", "), stamp)
	})
	e := k8senv.NewEquiv(t)
	cs := nativetest.LinesCase
	keep, order := nativetest.KeepEmptyProperties(), nativetest.KeepOrder()
	for _, version := range testenv.SparkLinePatches {
		t.Run(version, func(t *testing.T) {
			home, _ := testenv.SparkPatchHome(t, version)
			t.Parallel() // two at a time by default (-parallel follows GOMAXPROCS)
			ns := "lines-" + strings.ReplaceAll(version, ".", "")
			e.C.EnsureNamespace(t, ns)
			args := append(nativetest.CommonArgs(ns, version), cs.Args...)
			sentSpark, heldSpark, sentNative, heldNative := bothWays(t, e, home, version, ns, args, cs)

			compareNormalised(t, version+" objects held by the API server", heldSpark, heldNative, e.Repl, keep, order)
			compareNormalised(t, version+" request bodies", sentSpark, sentNative, e.Repl, keep, order)

			norm, err := nativetest.Normalise(sentSpark, e.Repl, keep, order)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(linesDir(t), version+".json"),
				&nativetest.Golden{Case: cs.Name, SparkVersion: version, Namespace: ns, Args: args, Env: cs.Env, Objects: norm})
			if !t.Failed() {
				mu.Lock()
				ran = append(ran, version)
				mu.Unlock()
			}
		})
	}
}
