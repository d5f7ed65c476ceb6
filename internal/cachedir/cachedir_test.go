//go:build unix

package cachedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
)

// Check and Make refuse a directory another user owns, a directory open to
// others (unless sticky, above the last one), and a symbolic link another
// user owns; Root gives each user their own cache in a shared one.
func TestCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create files owned by another uid")
	}
	base := t.TempDir()
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := mk("mine", 0o755, 0)
	defer func() {
		if _, err := os.Stat(filepath.Join(base, "open", "sub")); err != nil {
			t.Errorf("a directory under an open one was not made: %v", err)
		}
	}()
	sticky := mk("sticky", 0o777|os.ModeSticky, 0)
	open := mk("open", 0o777, 0)
	foreign := mk("foreign", 0o755, 65534)
	mk("open/foreign", 0o755, 65534)
	team := mk("team", 0o777|os.ModeSticky, 65534)
	if err := os.Symlink(mine, filepath.Join(base, "link-foreign")); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(base, "link-foreign"), 65534, 65534)
	if err := os.Symlink(mine, filepath.Join(base, "link-mine")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want string // "" ok, else a substring of the error
		soft bool   // the error is only a warning (Tolerable)
	}{
		{mine, "", false},
		{filepath.Join(mine, "a", "b"), "", false}, // created 0700
		{filepath.Join(sticky, "sub"), "", false},  // a sticky directory above is fine
		{sticky, "writable by group and others (mode 1777)", false},
		{filepath.Join(open, "sub"), "writable by group and others and not sticky (mode 0777)", true},
		{filepath.Join(open, "foreign"), "owned by uid 65534", false}, // the worse problem wins
		{foreign, "owned by uid 65534 (nobody), not by you (uid 0", false},
		{filepath.Join(foreign, "sub"), "owned by uid 65534", false},
		{filepath.Join(base, "link-foreign", "sub"), "a symbolic link owned by uid 65534", false},
		{filepath.Join(base, "link-mine", "sub"), "", false},
	} {
		err := Make(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Make(%s): %v", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Make(%s) = %v, want an error with %q", tc.path, err, tc.want)
		case tc.want != "":
			var ue *UnsafeError
			if !errors.As(err, &ue) || !errors.Is(err, errdefs.CantWrite) {
				t.Errorf("Make(%s) = %#v, want an *UnsafeError of kind CantWrite", tc.path, err)
			}
			if Tolerable(err) != tc.soft {
				t.Errorf("Make(%s): Tolerable = %v, want %v", tc.path, Tolerable(err), tc.soft)
			}
		}
	}
	if info, err := os.Stat(filepath.Join(mine, "a", "b")); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("created dir: %v %v, want mode 0700", info, err)
	}
	if _, err := os.Lstat(filepath.Join(foreign, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Make created a directory under another user's: %v", err)
	}
	for dir, want := range map[string]string{mine: mine, sticky: sticky, team: filepath.Join(team, "u0"), open: open, foreign: foreign} {
		if got := Root(dir); got != want {
			t.Errorf("Root(%s) = %s, want %s", dir, got, want)
		}
	}
}
