package k8s

// The package's process helpers; the API server, the test kubelet and the
// fault proxy are internal/testenv/k8senv's.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// startProc starts bin with its output in dir/name.log and stops it
// (SIGTERM, SIGKILL after 15 s) in t.Cleanup.
func startProc(t testing.TB, dir, name, bin string, args ...string) {
	t.Helper()
	p, err := testenv.StartProcess(name, filepath.Join(dir, name+".log"), exec.Command(bin, args...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0, 15*time.Second, t.Logf) })
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
