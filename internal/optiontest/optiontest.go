// Package optiontest checks the plumbing of a library's functional options
// (type Option func(*options) error): an option's error stops the call
// that takes it.
package optiontest

import (
	"errors"
	"testing"
)

// Stops runs call with two options: the first fails with a test error,
// the second records that it was applied. call (which may put options of
// its own before them) must return the test error (errors.Is) without
// applying the second: the first option error stops the call.
func Stops[T any, O ~func(*T) error](t testing.TB, call func(opts ...O) error) {
	t.Helper()
	errOpt := errors.New("optiontest: an option's error")
	applied := false
	fail := O(func(*T) error { return errOpt })
	later := O(func(*T) error { applied = true; return nil })
	if err := call(fail, later); !errors.Is(err, errOpt) {
		t.Errorf("with an option that fails: %v, want the option's error", err)
	}
	if applied {
		t.Error("an option after the failing one was applied")
	}
}
