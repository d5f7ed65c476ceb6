package k8s

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

// linesDir holds the per-line goldens (one per patch).
func linesDir(t testing.TB) string { return filepath.Join(filepath.Dir(equivDir(t)), "equiv-lines") }

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
func TestNativeLinesEquivalenceIT(t *testing.T) {
	e := newEquivEnv(t)
	cs := nativetest.LinesCase
	keep, order := nativetest.KeepEmptyProperties(), nativetest.KeepOrder()
	for _, version := range testenv.SparkLinePatches {
		t.Run(version, func(t *testing.T) {
			home, _ := testenv.SparkPatchHome(t, version)
			t.Parallel() // two at a time by default (-parallel follows GOMAXPROCS)
			ns := "lines-" + strings.ReplaceAll(version, ".", "")
			e.c.ensureNamespace(t, ns)
			args := append(nativetest.CommonArgs(ns, version), cs.Args...)
			sentSpark, heldSpark, sentNative, heldNative := e.bothWays(t, home, version, ns, args, cs)

			compareNormalised(t, version+" objects held by the API server", heldSpark, heldNative, e.repl, keep, order)
			compareNormalised(t, version+" request bodies", sentSpark, sentNative, e.repl, keep, order)

			norm, err := nativetest.Normalise(sentSpark, e.repl, keep, order)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(linesDir(t), version+".json"),
				&nativetest.Golden{Case: cs.Name, SparkVersion: version, Namespace: ns, Args: args, Env: cs.Env, Objects: norm})
		})
	}
}
