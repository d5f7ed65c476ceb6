package k8senv

import (
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers/registrytest"
)

// BaseInRegistry starts a real registry holding testdata/base-image's
// 3.5.0 as REG/spark/base:3.5.0 and makes namespace ns on c; it returns REG
// and the base.
func BaseInRegistry(t testing.TB, c *Cluster, ns string) (reg, base string) {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	reg = registrytest.Start(t).Repo("")
	base = reg + "/spark/base:3.5.0"
	registrytest.PushIndex(t, filepath.Join(root, "testdata", "base-image"), "3.5.0", base)
	c.EnsureNamespace(t, ns)
	return reg, base
}
