package bed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// Process is a server process a launcher started, its output appended to
// Log.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	Log  string
	done chan struct{}
	// started is when the process started: its readiness is logged as a
	// launch of that long (launchLog).
	started time.Time
}

// startProcess starts bin with args, its output appended to logFile, in
// its own process group (a Ctrl-C of `make cluster` reaches the launcher
// only, which stops the servers in order) and killed with the process
// that launched it (a test binary's end or timeout).
func startProcess(name, logFile string, env []string, bin string, args ...string) (*Process, error) {
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = logf, logf, env
	cmd.Dir = filepath.Dir(logFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, Cmd: cmd, Log: logFile, done: make(chan struct{}), started: time.Now()}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill kills the process (its group) and waits for its end: its ports are
// then closed.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Stop sends sig (SIGTERM when 0), then kills the process group after
// grace, and waits for its end.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) {
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	_ = p.Cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// waitReady polls ok every 20ms until it returns true; it fails when p
// exits first or after d, with the tail of p's log.
func (p *Process) waitReady(what string, d time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for !ok() {
		if p.Exited() {
			return fmt.Errorf("%s exited before %s:\n%s", p.Name, what, testenv.TailFile(p.Log, 30))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not %s after %s:\n%s", p.Name, what, d, testenv.TailFile(p.Log, 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
	launchLog("launch %s %.2fs", p.Name, time.Since(p.started).Seconds())
	return nil
}

// server is what every launched server keeps: its processes, stopped in
// reverse (the attached copy of a published server has none).
type server struct {
	procs []*Process
	once  sync.Once
}

func (s *server) stop() {
	s.once.Do(func() {
		for i := len(s.procs) - 1; i >= 0; i-- {
			s.procs[i].Stop(0, 20*time.Second)
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
