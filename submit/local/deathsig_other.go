//go:build !linux

package local

import "syscall"

// withParentDeath is a no-op where the system has no parent-death signal:
// the reaper alone (startReaper) stops the child's group when prebake
// dies.
func withParentDeath(a *syscall.SysProcAttr, _ syscall.Signal) *syscall.SysProcAttr { return a }

// lockThread is a no-op where there is no parent-death signal.
func lockThread() func() { return func() {} }
