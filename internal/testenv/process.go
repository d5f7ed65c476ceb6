package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/prebake/prebake/internal/redact"
)

// Process is a server process a test launcher started (StartProcess): in
// its own process group, killed with the process that started it, its
// output appended to Log. The one process type of every launcher (the
// bed's servers, the control plane and the node, the operator).
type Process struct {
	Name    string
	Cmd     *exec.Cmd
	Log     string
	Started time.Time
	done    chan struct{}
}

// StartProcess starts cmd (its path, arguments, environment and directory
// set by the caller) as the server name, its output appended to logFile.
// It runs in its own process group (a Ctrl-C of `make cluster` reaches the
// launcher only, which stops the servers in order) and is killed with the
// process that launched it (a test binary's end or timeout).
func StartProcess(name, logFile string, cmd *exec.Cmd) (*Process, error) {
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, Cmd: cmd, Log: logFile, Started: time.Now(), done: make(chan struct{})}
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

// Kill kills the process group and waits for the process's end: its ports
// are then closed.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Stop sends sig (SIGTERM when 0), kills the process group when the
// process has not exited after grace (logf, when not nil, says so), and
// returns once it is reaped.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration, logf func(string, ...any)) {
	if p.Exited() {
		return
	}
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	_ = p.Cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		if logf != nil {
			logf("%s ignored %s for %s; killing it", p.Name, sig, grace)
		}
		p.Kill()
	}
}

// WaitReady polls ok every interval until it returns true; it fails when
// the process exits first or after d, with the tail of its log.
func (p *Process) WaitReady(what string, d, interval time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for !ok() {
		if p.Exited() {
			return fmt.Errorf("%s exited before %s:\n%s", p.Name, what, TailFile(p.Log, 30))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not %s after %s:\n%s", p.Name, what, d, TailFile(p.Log, 30))
		}
		time.Sleep(interval)
	}
	return nil
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
