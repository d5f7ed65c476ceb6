package local

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunEndsReaperQuietly: a run that ends on its own leaves what the
// child left behind on purpose (spark-daemon.sh's server, started with
// nohup) running: the reaper acts only when prebake dies without a word.
// (cmd's TestLinkSIGKILLLeavesNothing kills prebake.)
func TestRunEndsReaperQuietly(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "daemon.pid")
	bin := filepath.Join(dir, "start-daemon")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nsleep 300 </dev/null >/dev/null 2>&1 &\necho $! > "+pidFile+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Process{Bin: bin, KillGrace: time.Second}
	if code, _, err := p.Run(context.Background()); err != nil || code != 0 {
		t.Fatalf("Run: %d, %v", code, err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(1500 * time.Millisecond) // longer than the reaper's grace
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || strings.Contains(string(stat), ") Z") {
		t.Errorf("the daemon %d is gone after a run that ended on its own: %v", pid, err)
	}
}
