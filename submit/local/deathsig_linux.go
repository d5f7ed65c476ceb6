package local

import (
	"runtime"
	"syscall"
)

// withParentDeath makes the child get sig when prebake dies, however it
// dies: SIGKILL (Airflow's on_kill) runs no handler of prebake's, so the
// kernel's parent-death signal is what stops the child. The signal is
// sent when the thread that forked the child exits, not the process: the
// caller must hold the thread (lockThread) from the start until the
// child has been waited for.
func withParentDeath(a *syscall.SysProcAttr, sig syscall.Signal) *syscall.SysProcAttr {
	if a == nil {
		a = &syscall.SysProcAttr{}
	}
	a.Pdeathsig = sig
	return a
}

// lockThread pins the calling goroutine to its thread, so that the
// thread that starts a child with a parent-death signal lives as long as
// the wait for it; the returned func releases it.
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
