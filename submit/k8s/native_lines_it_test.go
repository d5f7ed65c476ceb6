package k8s

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit/k8s/native"
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
// writes spark.submit.pyFiles= for a jar application). The goldens
// (testdata/equiv-lines/<version>.json) are checked live too, or rewritten
// with -update-equiv. A patch that is not installed is skipped (a failure
// under CI).
func TestNativeLinesEquivalenceIT(t *testing.T) {
	e := newEquivEnv(t)
	cs := nativetest.LinesCase
	keep := nativetest.KeepEmptyProperties()
	for _, version := range testenv.SparkLinePatches {
		t.Run(version, func(t *testing.T) {
			home, _ := testenv.SparkLineHome(t, version)
			t.Parallel() // two at a time by default (-parallel follows GOMAXPROCS)
			ns := "lines-" + strings.ReplaceAll(version, ".", "")
			e.c.ensureNamespace(t, ns)
			args := append(nativetest.CommonArgs(ns, version), cs.Args...)
			start := time.Now()
			cmd := exec.Command(filepath.Join(home, "bin", "spark-submit"), nativetest.Expand(args, e.repl)...)
			cmd.Env = e.sparkSubmitEnv(t, home, cs.Env)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("spark-submit %s: %v\n%s", version, err, out)
			}
			t.Logf("spark-submit %s took %s", version, time.Since(start).Round(time.Millisecond))
			sentSpark := e.rec.take(ns)
			heldSpark := readBack(t, e.c.admin, ns)
			clearNamespace(t, e.c.admin, ns)

			in, err := nativetest.FromArgv(nativetest.Expand(args, e.repl), version, e.caseEnv(cs))
			if err != nil {
				t.Fatalf("FromSubmission: %v", err)
			}
			objs, err := native.Build(in)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if _, err := native.Create(context.Background(), e.native, objs); err != nil {
				t.Fatalf("Create: %v", err)
			}
			sentNative := e.rec.take(ns)
			heldNative := readBack(t, e.c.admin, ns)
			clearNamespace(t, e.c.admin, ns)

			compareNormalised(t, version+" objects held by the API server", heldSpark, heldNative, e.repl, keep)
			compareNormalised(t, version+" request bodies", sentSpark, sentNative, e.repl, keep)

			norm, err := nativetest.Normalise(sentSpark, e.repl, keep)
			if err != nil {
				t.Fatal(err)
			}
			g := &nativetest.Golden{Case: cs.Name, SparkVersion: version, Namespace: ns, Args: args, Env: cs.Env, Objects: norm}
			golden := filepath.Join(linesDir(t), version+".json")
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
				t.Errorf("spark-submit %s no longer matches its golden %s (-golden +live):\n%s", version, golden, diff)
			}
		})
	}
}
