package outdated

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
)

// TestRunRefuses: what Run refuses before it asks any repository: a
// version set for a package the lock does not name (a bad argument naming
// the option), and a re-lock of a lock with wheels (a *PythonHalfError);
// the lock is left as it was.
func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	jars := filepath.Join(dir, "jars.lock")
	if err := lock.Write(jars, &lock.File{Inputs: lock.Inputs{Conflict: lock.ConflictLatest, Packages: []string{"org.o:app:1.0,org.o:lib:1.0"}}}); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "py.lock")
	if err := lock.Write(py, &lock.File{Inputs: lock.Inputs{Conflict: lock.ConflictLatest, Python: &lock.PythonInputs{Indexes: []string{"https://index.invalid/simple/"}, Platforms: []string{"manylinux_2_36_x86_64"}, Requirements: []string{"six"}, Version: "3.11"}},
		Artifacts: []lock.Artifact{{Kind: lock.KindWheel, Name: "six", Version: "1.16.0", File: "six-1.16.0-py2.py3-none-any.whl", Sha256: strings.Repeat("a", 64), Size: 1, Repository: "https://index.invalid/simple/"}}}); err != nil {
		t.Fatal(err)
	}
	other := resolver.Coordinate{Group: "org.o", Artifact: "other", Version: "2.0"}
	lib := resolver.Coordinate{Group: "org.o", Artifact: "lib", Version: "2.0"}
	tests := []struct {
		name    string
		in      Input
		option  string
		python  bool
		message string
	}{
		{"set: not a direct package", Input{LockPath: jars, Set: []resolver.Coordinate{lib, other}}, "outdated.Input.Set", false, "org.o:other is not a direct package of " + jars},
		{"latest: a Python half", Input{LockPath: py, Latest: true}, "", true, "(1 wheels)"},
		{"set: a Python half", Input{LockPath: py, Set: []resolver.Coordinate{lib}}, "", true, "has a Python half"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Request = resolver.Request{NoDefaultRepositories: true, Offline: true, CacheDir: filepath.Join(dir, "cache")}
			_, err := Run(context.Background(), tt.in)
			if !errors.Is(err, errdefs.BadArgument) || errdefs.OptionOf(err) != tt.option || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("Run: %v (kind %v, option %q), want a bad argument of option %q saying %q", err, errdefs.KindOf(err), errdefs.OptionOf(err), tt.option, tt.message)
			}
			var ph *PythonHalfError
			if errors.As(err, &ph) != tt.python || (tt.python && (ph.Lock != py || ph.Wheels != 1)) {
				t.Errorf("Run: %v: PythonHalfError %+v, want one: %v", err, ph, tt.python)
			}
		})
	}
}
