package local

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// reaperScript is the reaper (startReaper): a POSIX shell that reads the
// child's process group from its stdin, then waits for a second line. The
// line "done" is the end of a run: nothing to do. End of file is prebake
// gone without a word (SIGKILL, a crash): the group gets SIGTERM, then,
// after $1 seconds for it to stop, SIGKILL. It ignores the signals a
// terminal or a caller sends to prebake's group, which prebake handles.
const reaperScript = `trap '' INT TERM HUP
read pg || exit 0
read x
[ "$x" = done ] && exit 0
kill -TERM "-$pg" 2>/dev/null || exit 0
i=0
while [ "$i" -lt "$1" ] && kill -0 "-$pg" 2>/dev/null; do sleep 1; i=$((i+1)); done
kill -KILL "-$pg" 2>/dev/null
exit 0`

// reaperShell is the shell the reaper runs in.
var reaperShell = "/bin/sh"

// A reaper stops a child's process group when prebake dies without
// stopping it. The kernel's parent-death signal (withParentDeath) reaches
// the child only, not what the child started (spark-submit's JVM starts a
// PySpark job's python driver, which outlived the JVM), and prebake killed
// with SIGKILL runs no code: a process that outlives prebake, and learns
// of its death from the end of a pipe, does it.
type reaper struct {
	cmd *exec.Cmd
	w   *os.File
}

// startReaper starts a reaper that gives a group grace to stop after
// SIGTERM; nil when it cannot start (no shell): the parent-death signal
// is then the only guard.
func startReaper(grace time.Duration) *reaper {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	secs := int((grace + time.Second - 1) / time.Second)
	cmd := exec.Command(reaperShell, "-c", reaperScript, "prebake-reaper", strconv.Itoa(secs))
	cmd.Stdin = r
	// A group of its own: a terminal's ^C, or a SIGTERM to prebake's
	// group, is prebake's to handle.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil
	}
	return &reaper{cmd: cmd, w: w}
}

// watch hands the reaper the group to stop should prebake die.
func (r *reaper) watch(pgid int) {
	if r == nil {
		return
	}
	if _, err := fmt.Fprintf(r.w, "%d\n", pgid); err != nil {
		r.stop()
	}
}

// stop ends the reaper without its stopping anything: the run is over.
func (r *reaper) stop() {
	if r == nil {
		return
	}
	_, _ = fmt.Fprintln(r.w, "done")
	_ = r.w.Close()
	_ = r.cmd.Wait()
}
