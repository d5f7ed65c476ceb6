package testenv

import (
	"errors"
	"sync"
	"testing"
)

// Shared is a value a test binary makes once for all its tests (a server,
// an image, an Airflow home): the first Get makes it, every Get returns it,
// and a failed make fails every test that asks. TestMain ends it with
// Close, which also gets what a failed make returned (a half-started
// server to stop, or the zero value). The zero value is ready to use.
type Shared[T any] struct {
	once sync.Once
	mu   sync.Mutex
	v    T
	err  error
	ran  bool // make returned: v is its to stop
}

// errClosed: Get after Close.
var errClosed = errors.New("stopped at the end of the test binary")

// Get returns the value, made by make on the first call.
func (s *Shared[T]) Get(t testing.TB, make func() (T, error)) T {
	t.Helper()
	s.once.Do(func() {
		v, err := make()
		s.mu.Lock()
		s.v, s.err, s.ran = v, err, true
		s.mu.Unlock()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.v
}

// Close hands what make returned, if it ran, to stop (once; stop must
// accept a failed make's value); later Gets fail.
func (s *Shared[T]) Close(stop func(T)) {
	s.once.Do(func() {}) // no make after Close
	s.mu.Lock()
	v, ran := s.v, s.ran
	var zero T
	s.v, s.ran, s.err = zero, false, errClosed
	s.mu.Unlock()
	if ran && stop != nil {
		stop(v)
	}
}

// atExit are the stops AtExit registered, run by RunAtExit.
var atExit struct {
	mu    sync.Mutex
	stops []func()
}

// AtExit registers stop for the end of the test binary: Main (or a
// TestMain that does more, by RunAtExit) runs it, last registered first.
// A server a test binary launched for itself registers its stop here; in
// a package without such a TestMain the server dies with the binary
// (Pdeathsig).
func AtExit(stop func()) {
	atExit.mu.Lock()
	atExit.stops = append(atExit.stops, stop)
	atExit.mu.Unlock()
}

// RunAtExit runs (once) the stops AtExit registered, last first.
func RunAtExit() {
	atExit.mu.Lock()
	stops := atExit.stops
	atExit.stops = nil
	atExit.mu.Unlock()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
}
