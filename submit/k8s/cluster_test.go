package k8s

// The package's process helpers; the API server, the test kubelet and the
// fault proxy are internal/testenv/k8senv's.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

func startProc(t testing.TB, dir, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() { logf.Close() })
	return cmd
}

func stopProc(t testing.TB, cmd *exec.Cmd) { haltProc(cmd, t.Logf) }

// haltProc stops cmd with SIGTERM, or SIGKILL after 15 s.
func haltProc(cmd *exec.Cmd, logf func(string, ...any)) {
	testenv.StopProcess(cmd, 15*time.Second, logf)
}

// readLines reads a file of lines (the fake spark-submit's argv).
func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func ptr[T any](v T) *T { return &v }
