package k8s

import (
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// The package's ITs need only an API server: they share one
// (k8senv.Shared), stopped at the binary's end (testenv.Main). The real-node journeys
// (internal/testenv/cluster) live in test/spark.

func TestMain(m *testing.M) { testenv.Main(m) }
