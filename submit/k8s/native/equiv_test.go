package native_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/submit/k8s/native"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

// TestEquivalenceGoldens replays, with no JVM and no server, every
// submission recorded from the real spark-submit (testdata/equiv/<version>/,
// written by submit's TestNativeEquivalenceIT -update-equiv): the native
// builder must send the same objects, after normalising the random parts.
func TestEquivalenceGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "equiv", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no goldens under testdata/equiv")
	}
	replayGoldens(t, files)
}

// TestLinesGoldens replays the per-line goldens (testdata/equiv-lines/,
// one submission per Spark patch, written by submit/k8s's
// TestNativeLinesEquivalenceIT -update-equiv), empty properties included,
// lists in the order sent.
func TestLinesGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "equiv-lines", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no goldens under testdata/equiv-lines")
	}
	replayGoldens(t, files, nativetest.KeepEmptyProperties(), nativetest.KeepOrder())
}

func replayGoldens(t *testing.T, files []string, opts ...nativetest.NormaliseOption) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", "equiv", "files"))
	if err != nil {
		t.Fatal(err)
	}
	repl := map[string]string{
		nativetest.Master:   "https://127.0.0.1:6443",
		nativetest.TestData: abs,
		nativetest.Tmp:      "/tmp/prebake-equiv-tmp",
	}
	for _, f := range files {
		g, err := nativetest.ReadGolden(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(g.SparkVersion+"/"+g.Case, func(t *testing.T) {
			env := map[string]string{"SPARK_USER": "prebake"}
			for k, v := range g.Env {
				env[k] = nativetest.Expand([]string{v}, repl)[0]
			}
			in, err := nativetest.FromArgv(nativetest.Expand(g.Args, repl), g.SparkVersion, env)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := native.Build(in)
			if err != nil {
				t.Fatal(err)
			}
			objs.SetOwner(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: objs.Pod.Name, UID: "uid"}})
			all := []any{objs.Pod}
			for _, o := range objs.Owned() {
				all = append(all, o)
			}
			maps, err := nativetest.ToMaps(all...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := nativetest.Normalise(maps, repl, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g.Objects, got); diff != "" {
				t.Errorf("native differs from spark-submit %s (-spark-submit +native):\n%s", g.SparkVersion, diff)
			}
		})
	}
}
