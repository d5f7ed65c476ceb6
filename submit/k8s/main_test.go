package k8s

import (
	"os"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// The package's ITs need only an API server: they share one
// (sharedCluster), which TestMain stops. The real-node journeys
// (internal/testenv/cluster) live in test/spark.

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedCluster()
	testenv.RunAtExit()
	testenv.RemovePrebake()
	os.Exit(code)
}
