package native

import (
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
