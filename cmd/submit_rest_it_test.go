package cmd

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/internal/testenv"
)

// TestSubmitRESTBinaryIT runs the built prebake binary against the fake
// Spark REST master (Spark itself cannot be installed here): exit 0 for
// FINISHED, 80 for FAILED, and a real SIGTERM that POSTs the kill.
func TestSubmitRESTBinaryIT(t *testing.T) {
	testenv.RequireIT(t)
	bin := testenv.Prebake(t)
	args := func(master string) []string {
		return []string{"submit", "--poll-interval", "50ms", "--", "--master", master, "--deploy-mode", "cluster",
			"--class", "com.example.Main", "hdfs:///app.jar"}
	}
	for _, tt := range []struct {
		end  string
		code int
	}{{"FINISHED", 0}, {"FAILED", exitcode.DriverFailed}} {
		fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "RUNNING"}, sparkresttest.Step{State: tt.end}))
		cmd := exec.Command(bin, args(restMaster(t, fake))...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s", tt.end, code, tt.code, stderr.String())
		}
	}

	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "RUNNING"}))
	cmd := exec.Command(bin, args(restMaster(t, fake))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !polled(fake) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitcode.DriverFailed {
		t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
	}
	killed := false
	for _, r := range fake.Requests() {
		killed = killed || r.Method == "POST" && strings.HasPrefix(r.Path, "/v1/submissions/kill/driver-")
	}
	if !killed {
		t.Errorf("SIGTERM did not POST a kill:\n%s", stderr.String())
	}
}

func polled(fake *sparkresttest.Server) bool {
	for _, r := range fake.Requests() {
		if strings.Contains(r.Path, "/status/") {
			return true
		}
	}
	return false
}
