package parity

import (
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// The native equivalence oracles share one API server (k8senv.Shared),
// stopped at the binary's end (testenv.Main); the operator oracle runs the CLI built once
// (testenv.Prebake).
func TestMain(m *testing.M) { testenv.Main(m) }
