package testenv

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/flock"
)

// BuildWait bounds how long a test waits for an install another process is
// still building (WaitForBuild): well within make test's go test -timeout.
const BuildWait = 30 * time.Minute

// WaitForBuild waits while another process builds what a test needs. A part
// of hack/infra.sh that .ci/run leaves building while the tests run (on a
// fresh machine: 57-spark-operator.sh, which only two tests need) holds an
// exclusive flock on lockPath for the whole build, and installs before it
// lets go. WaitForBuild returns at once when no lock file is there or nobody
// holds it, logs once when it waits, and fails t, naming what and the lock
// file, when the build has not ended within max. The caller then checks the
// install itself (a failed build leaves it missing).
func WaitForBuild(t testing.TB, lockPath, what string, max time.Duration) {
	t.Helper()
	f, err := os.Open(lockPath)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatalf("waiting for the build of %s: %v", what, err)
	}
	defer f.Close()
	start := time.Now()
	for waited := false; ; time.Sleep(2 * time.Second) {
		ok, err := flock.TryLock(f)
		if err != nil {
			return // no flock on this file system: no build to wait for
		}
		if ok {
			flock.Unlock(f)
			if waited {
				t.Logf("%s: its build ended after %s of waiting", what, time.Since(start).Round(time.Second))
			}
			return
		}
		if !waited {
			t.Logf("waiting up to %s for %s: another process is building it (it holds %s)", max, what, lockPath)
			waited = true
		}
		if time.Since(start) > max {
			t.Fatalf("%s: its build (the process holding %s) has not ended after %s", what, lockPath, max)
		}
	}
}
