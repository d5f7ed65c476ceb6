package k8s

import (
	"os"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/k8senv"
)

// The package's ITs need only an API server: they share one
// (k8senv.Shared), which TestMain stops. The real-node journeys
// (internal/testenv/cluster) live in test/spark.

func TestMain(m *testing.M) {
	code := m.Run()
	k8senv.StopShared("submit/k8s")
	testenv.RunAtExit()
	testenv.RemovePrebake()
	os.Exit(code)
}
