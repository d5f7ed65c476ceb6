package testenv

import (
	"errors"
	"testing"
)

func TestSharedMakesOnce(t *testing.T) {
	var s Shared[int]
	makes := 0
	mk := func() (int, error) { makes++; return 7, nil }
	if got := s.Get(t, mk) + s.Get(t, mk); got != 14 || makes != 1 {
		t.Fatalf("two Gets: sum %d, %d makes; want 14, 1", got, makes)
	}
	var stopped []int
	s.Close(func(v int) { stopped = append(stopped, v) })
	s.Close(func(v int) { stopped = append(stopped, v) })
	if len(stopped) != 1 || stopped[0] != 7 {
		t.Errorf("Close twice stopped %v, want [7]", stopped)
	}
}

func TestSharedCloseUnmade(t *testing.T) {
	var s Shared[string]
	s.Close(func(string) { t.Error("stop called for a value never made") })
}

func TestSharedFailedMake(t *testing.T) {
	var s Shared[int]
	makes := 0
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		s.Get(ft, func() (int, error) { makes++; return 0, errors.New("no server") })
	}()
	func() {
		defer func() { _ = recover() }()
		s.Get(ft, func() (int, error) { makes++; return 1, nil })
	}()
	if makes != 1 || ft.fatals != 2 {
		t.Errorf("%d makes, %d fatals; want 1, 2", makes, ft.fatals)
	}
}

// fatalRecorder counts Fatal calls and stops the caller with a panic
// instead of ending the test.
type fatalRecorder struct {
	testing.TB
	fatals int
}

func (f *fatalRecorder) Fatal(args ...any) { f.fatals++; panic("fatal") }
func (f *fatalRecorder) Helper()           {}
