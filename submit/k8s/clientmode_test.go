package k8s

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
)

// TestClientModeRunner: K8s client mode runs spark-submit through
// submit/local's runner: its exit code is the driver's (passed through),
// its stdout joins its stderr, and a cancel stops its whole process group
// (a child that outlived a signal to spark-submit alone) with the kind of
// a cancel.
func TestClientModeRunner(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	args := []string{"--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "client", "--class", "a.B", "local:///app.jar"}
	run := func(ctx context.Context, bin string) (*Result, string, error) {
		var stderr strings.Builder
		b, err := New(WithSparkSubmit(bin), WithStderr(&stderr))
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.Submit(ctx, &submit.Prepared{Sub: mustLoad(t, args, nil)})
		return out.(*Result), stderr.String(), err
	}

	res, stderr, err := run(context.Background(), script("exit3", "echo on-stdout\necho on-stderr >&2\nexit 3\n"))
	if e := errdefs.Outermost(err); e == nil || e.Kind != errdefs.DriverExit || e.Code != 3 || res.DriverExitCode == nil || *res.DriverExitCode != 3 {
		t.Errorf("exit 3: %v, driver exit code %v", err, res.DriverExitCode)
	}
	if !strings.Contains(stderr, "on-stdout") || !strings.Contains(stderr, "on-stderr") {
		t.Errorf("stderr %q: want both streams", stderr)
	}

	pidFile := filepath.Join(dir, "child.pid")
	bin := script("hang", "sh -c 'trap \"\" TERM; echo $$ > "+pidFile+"; sleep 60' &\nsleep 60\n")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	res, _, err = run(ctx, bin)
	if errdefs.KindOf(err) != kindCancelled || res.Reason != reasonCancelled {
		t.Errorf("cancel: %v (reason %s), want %v", err, res.Reason, kindCancelled)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancel took %v", d)
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	if pid > 0 {
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("child %d that ignores SIGTERM outlived the cancel", pid)
		}
	}
}
