package bed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// startProcess starts bin with args as the server name (env nil: this
// process's), in the directory of logFile, its output appended to it
// (testenv.StartProcess).
func startProcess(name, logFile string, env []string, bin string, args ...string) (*testenv.Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, filepath.Dir(logFile)
	return testenv.StartProcess(name, logFile, cmd)
}

// waitReady polls ok every 20ms until it returns true (p.WaitReady), and
// logs the launch with the time it took.
func waitReady(p *testenv.Process, what string, d time.Duration, ok func() bool) error {
	if err := p.WaitReady(what, d, 20*time.Millisecond, ok); err != nil {
		return err
	}
	launchLog("launch %s %.2fs", p.Name, time.Since(p.Started).Seconds())
	return nil
}

// server is what every launched server keeps: its processes, stopped in
// reverse (the attached copy of a published server has none).
type server struct {
	procs []*testenv.Process
	once  sync.Once
}

func (s *server) stop() {
	s.once.Do(func() {
		for i := len(s.procs) - 1; i >= 0; i-- {
			s.procs[i].Stop(0, 20*time.Second, nil)
		}
	})
}

// ownDirPrefix names the directories of the servers a test binary
// launches for itself; the pid after it lets a later binary remove those
// of binaries that died without their TestMain.
const ownDirPrefix = "prebake-bed-"

// ownDir makes a directory for a server a test binary launches for itself,
// removing those of test binaries that have exited.
func ownDir(name string) (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), ownDirPrefix+"*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), ownDirPrefix), "-")
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && !alive(n) {
			_ = os.RemoveAll(d)
		}
	}
	return os.MkdirTemp("", fmt.Sprintf("%s%d-%s-", ownDirPrefix, os.Getpid(), name))
}

// launchLog appends a line to $PREBAKE_BED_LAUNCHES (when set): each
// server process launched, with the time until it was ready, and each use
// of a server by a test; the figures of docs/contributing.md count them.
func launchLog(format string, args ...any) {
	path := os.Getenv("PREBAKE_BED_LAUNCHES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, time.Now().UTC().Format("15:04:05.000")+" pid=%d "+format+"\n", append([]any{os.Getpid()}, args...)...)
}

// Used records that a test used server, the bed's ("bed"), the binary's
// own ("own") or one of its own ("private").
func Used(t testing.TB, server, whose string) {
	launchLog("use %s %s %s", server, whose, t.Name())
}

// own launches a server for the test binary, once (shared), stopping it at
// the binary's end; it returns the bed's when published and answering.
func own[T interface{ stop() }](t testing.TB, name string, shared *testenv.Shared[T], bed T, ok bool, launch func(dir string) (T, error)) T {
	t.Helper()
	if ok {
		Used(t, name, "bed")
		return bed
	}
	v := shared.Get(t, func() (T, error) {
		dir, err := ownDir(name)
		if err != nil {
			var zero T
			return zero, err
		}
		v, err := launch(dir)
		if err != nil {
			_ = os.RemoveAll(dir)
			return v, fmt.Errorf("launching %s for the test binary: %w", name, err)
		}
		testenv.AtExit(func() { shared.Close(func(v T) { v.stop(); _ = os.RemoveAll(dir) }) })
		return v, nil
	})
	Used(t, name, "own")
	return v
}
