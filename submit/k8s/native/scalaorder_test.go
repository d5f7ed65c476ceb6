package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The lines case's volume keys: the real spark-submit of every line
// (3.5.0 … 4.3.0) numbered the on-demand claim 0, so the
// persistentVolumeClaim keys come out of Spark's map before the hostPath
// ones, in Scala 2.12's order and in 2.13's.
func TestScalaMapOrderLinesCase(t *testing.T) {
	keys := []string{
		"hostPath.host.mount.path", "hostPath.host.mount.readOnly", "hostPath.host.options.path",
		"persistentVolumeClaim.spill.mount.path", "persistentVolumeClaim.spill.options.claimName",
		"persistentVolumeClaim.spill.options.sizeLimit", "persistentVolumeClaim.spill.options.storageClass",
	}
	for _, scala213 := range []bool{false, true} {
		got := scalaMapOrder(keys, scala213)
		if len(got) != len(keys) {
			t.Fatalf("lost keys: %q", got)
		}
		t.Logf("scala213=%v: %q", scala213, got)
		if got[0][:len("persistentVolumeClaim")] != "persistentVolumeClaim" {
			t.Errorf("scala213=%v: first key %q, want a persistentVolumeClaim one (Spark numbered the claim 0)", scala213, got[0])
		}
	}
	// Four keys or fewer keep their order (Map1..Map4).
	small := []string{"b", "a", "c"}
	if diff := cmp.Diff(small, scalaMapOrder(small, true)); diff != "" {
		t.Error(diff)
	}
	// java.lang.String.hashCode.
	for s, want := range map[string]int32{"": 0, "a": 97, "hello": 99162322} {
		if got := javaStringHash(s); got != want {
			t.Errorf("hash(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestScalaMapOrderRecorded: scalaMapOrder against the orders the real
// scala-library 2.12.18 (Spark 3.5) and 2.13.16 (Spark 4.x) iterate the
// same keys in (testdata/scalaorder, recorded by its Order.java): 80 key
// sets of 5 to 34 keys, volume keys and random strings, with
// String.hashCode collisions ("Aa", "BB").
func TestScalaMapOrderRecorded(t *testing.T) {
	lines := func(name string) [][]string {
		data, err := os.ReadFile(filepath.Join("testdata", "scalaorder", name))
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			out = append(out, strings.Split(l, "\t"))
		}
		return out
	}
	keys := lines("keys.tsv")
	for _, tc := range []struct {
		file     string
		scala213 bool
	}{{"order-2.12.tsv", false}, {"order-2.13.tsv", true}} {
		want := lines(tc.file)
		if len(want) != len(keys) {
			t.Fatalf("%s: %d lines, keys.tsv %d", tc.file, len(want), len(keys))
		}
		for i := range keys {
			if diff := cmp.Diff(want[i], scalaMapOrder(keys[i], tc.scala213)); diff != "" {
				t.Errorf("%s line %d (-scala +scalaMapOrder):\n%s", tc.file, i+1, diff)
			}
		}
	}
}

// TestVolumeOrderRecorded: the driver's volumes in the order Spark's own
// KubernetesVolumeUtils.parseVolumesWithPrefix returns them, per patch
// (testdata/scalaorder/volumes-<version>.tsv, recorded by its Vols.java
// from each pyspark's jars): 60 sets of 5 to 9 volumes of every type, in a
// Scala HashSet of specs (specHash), readOnly, subPath and claim options
// included.
func TestVolumeOrderRecorded(t *testing.T) {
	dir := filepath.Join("testdata", "scalaorder")
	data, err := os.ReadFile(filepath.Join(dir, "volumes.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	files, err := filepath.Glob(filepath.Join(dir, "volumes-*.tsv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded orders: %v", err)
	}
	for _, f := range files {
		version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "volumes-"), ".tsv")
		t.Run(version, func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			wants := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
			if len(wants) != len(inputs) {
				t.Fatalf("%d lines, volumes.tsv %d", len(wants), len(inputs))
			}
			for i, line := range inputs {
				args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
					"--conf", "spark.kubernetes.container.image=img"}
				for _, kv := range strings.Split(line, "\t") {
					args = append(args, "--conf", volPrefix+kv)
				}
				in, err := FromArgv(append(args, "--class", "M", "local:///a.jar"), version, nil)
				if err != nil {
					t.Fatal(err)
				}
				objs, err := Build(in)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				var got []string
				for _, v := range objs.Pod.Spec.Volumes {
					if !strings.HasPrefix(v.Name, "spark-") { // the local dir and conf volumes
						got = append(got, v.Name)
					}
				}
				if diff := cmp.Diff(strings.Split(wants[i], "\t"), got); diff != "" {
					t.Errorf("line %d (-spark +native):\n%s", i+1, diff)
				}
			}
		})
	}
}
