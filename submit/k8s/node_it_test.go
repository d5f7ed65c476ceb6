package k8s

import (
	"os"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/cluster"
)

// TestSparkOperatorNodeIT and TestWarmJobNodeIT run on the real
// single-node cluster (internal/testenv/cluster): the run's test bed when
// one serves it, else one this binary launches and TestMain stops. The
// other real-node journeys live in test/spark. The package's other ITs
// need only an API server: they share one (sharedCluster), which TestMain
// stops too.

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.Stop()
	stopSharedCluster()
	testenv.RemovePrebake()
	os.Exit(code)
}
