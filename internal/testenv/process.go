package testenv

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/prebake/prebake/internal/redact"
)

// StopProcess stops a started server process: SIGTERM, then SIGKILL when
// it has not exited after grace (logf says so); it returns once the
// process is reaped. The one way the launchers stop what they started.
func StopProcess(cmd *exec.Cmd, grace time.Duration, logf func(string, ...any)) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		if logf != nil {
			logf("%s ignored SIGTERM for %s; killing it", cmd.Path, grace)
		}
		_ = cmd.Process.Kill()
		<-done
	}
}

// TailFile is the last n lines of the file at path ("" when unreadable),
// each redacted: a server's log in a failure message.
func TailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = redact.Line(l)
	}
	return strings.Join(lines, "\n")
}
