package k8s

import (
	"testing"

	"github.com/prebake/prebake/errdefs"
)

// runEnd is how a run ended, in errdefs terms (cmd alone maps it to an
// exit code): the kind of the outermost classified error, the driver's own
// exit code for errdefs.DriverExit, and whether the driver decided it.
type runEnd struct {
	Kind   errdefs.Kind // errdefs.Unknown: no error
	Code   int          // the driver's exit code (Kind errdefs.DriverExit)
	Driver bool
}

// endOK is a run without an error: the driver's success.
var endOK = runEnd{Driver: true}

// endDriverFailed is the driver's failure with no exit code of its own (or
// one of prebake's codes).
var endDriverFailed = runEnd{Kind: errdefs.DriverFailed, Driver: true}

// endExit is the driver's own exit code, passed through.
func endExit(code int) runEnd { return runEnd{Kind: errdefs.DriverExit, Code: code, Driver: true} }

// endKind is prebake's own outcome of kind k.
func endKind(k errdefs.Kind) runEnd { return runEnd{Kind: k} }

// endCancelled is prebake interrupted (kindCancelled, prebake's).
var endCancelled = endKind(kindCancelled)

// endOf is how a run that returned err ended.
func endOf(err error) runEnd {
	if err == nil {
		return endOK
	}
	e := errdefs.Outermost(err)
	if e == nil {
		return runEnd{}
	}
	return runEnd{Kind: e.Kind, Code: e.Code, Driver: e.Driver}
}

// cliExitCancelled is the CLI's exit code for a cancelled run (80, driver
// failed: the README's table), for the tests that run the binary.
const cliExitCancelled = 80

// checkKind fails t unless err is of kind want (errdefs.Unknown: nil).
func checkKind(t testing.TB, err error, want errdefs.Kind) {
	t.Helper()
	if want == errdefs.Unknown {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	if got := errdefs.KindOf(err); got != want {
		t.Fatalf("kind %v, want %v: %v", got, want, err)
	}
}
