package parity

import (
	"os"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/k8senv"
)

// The native equivalence oracles share one API server (k8senv.Shared),
// which TestMain stops; the operator oracle runs the CLI built once
// (testenv.Prebake).
func TestMain(m *testing.M) {
	code := m.Run()
	k8senv.StopShared("test/parity")
	testenv.RunAtExit()
	testenv.RemovePrebake()
	os.Exit(code)
}
