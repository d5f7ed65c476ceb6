// Package cachedir decides where the current user's cache lives inside a
// cache directory, and checks the directories prebake writes into or hands
// out paths under, so that no other user of a shared cache can swap what
// is there after prebake checked it.
//
// A cache directory that is shared (sticky and writable by others, as a
// 1777 directory that root made for a team) holds one private cache per
// user: <dir>/u<uid>, mode 0700 (Root). Any other cache directory is used
// as it is: the user's own, or another user's or root's (read, its blobs
// hashed before use).
//
// Make and Check trust a directory only when it, and every directory above
// it, is owned by the current user or root and writable by no one else (a
// sticky directory excepted for the directories above); a symbolic link is
// followed only when the user or root owns it. A directory that fails is an
// *UnsafeError (errdefs.CantWrite): prebake never re-creates it, since a
// shared directory's entries can be removed only by their owner. One case
// is only a warning (Tolerable): a directory of the user's or root's that
// others may write without the sticky bit, as a Kubernetes emptyDir (0777)
// in a pod whose only user is prebake's.
//
// Layout names every directory of the user's cache (blobs, index, stamps,
// retrieve, rewrite, layers, signatures, the Python half's trees), so the
// packages that read and write it spell none of them.
package cachedir

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// UnsafeError says why a directory cannot be trusted.
type UnsafeError struct {
	Path   string
	Reason string
	// Open is set when the directory is only open to others (not sticky),
	// and owned by the user or root: see Tolerable.
	Open bool
}

func (e *UnsafeError) Error() string {
	if e.Open {
		return fmt.Sprintf("cache directory %s is %s: another user could swap what prebake writes there (chmod +t or go-w it, or use a private cache directory)", e.Path, e.Reason)
	}
	return fmt.Sprintf("unsafe cache directory %s: %s; prebake writes only under directories that only you or root can change (remove it, or use another cache directory)", e.Path, e.Reason)
}

// Tolerable reports whether err is only a directory open to others (see
// UnsafeError.Open), which callers print as a warning and go on.
func Tolerable(err error) bool {
	var ue *UnsafeError
	return errors.As(err, &ue) && ue.Open
}

// Root is the directory holding the current user's cache in dir: dir
// itself, or dir/u<uid> when dir is shared (sticky, writable by others and
// owned by another user). It does not create anything.
func Root(dir string) string {
	if dir == "" {
		return dir
	}
	if info, err := os.Stat(dir); err == nil && shared(info) {
		return UserDir(dir)
	}
	return dir
}

// UserDir is dir/u<uid>, the user's private cache in a shared directory.
func UserDir(dir string) string {
	return filepath.Join(dir, "u"+strconv.Itoa(os.Geteuid()))
}

// Owner is the uid that owns path (following a symbolic link).
func Owner(path string) (uid int, ok bool) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	return ownerOf(info)
}

// Mine reports whether the current user owns path (following a symbolic
// link); false when it cannot tell.
func Mine(path string) bool {
	uid, ok := Owner(path)
	return ok && uid == os.Geteuid()
}

// TrustedOwner reports whether the current user or root owns the file
// (true where files have no owners).
func TrustedOwner(info os.FileInfo) bool {
	if !owners {
		return true
	}
	uid, ok := ownerOf(info)
	return ok && (uid == os.Geteuid() || uid == 0)
}

// Make creates dir (mode 0700, with its missing parents) unless it exists,
// and checks it as Check does. Errors are errdefs.CantWrite.
func Make(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	if !owners {
		return os.MkdirAll(abs, 0o700)
	}
	// Nothing is created under a directory that fails.
	if err := checkChain(filepath.Dir(abs), 0); err != nil && !errors.Is(err, os.ErrNotExist) && !Tolerable(err) {
		return errdefs.New(errdefs.CantWrite, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache directory %s: %w", abs, err))
	}
	return Check(abs)
}

// Check checks that dir and every directory above it are owned by the
// current user or root and writable by no one else (the directories above
// may be sticky instead), and that every symbolic link on the way is owned
// by the user or root. A missing directory matches os.ErrNotExist; an
// unsafe one is an *UnsafeError; both are errdefs.CantWrite.
func Check(dir string) error {
	if !owners {
		return nil // no owners on this platform (Windows): nothing to check
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	open := checkChain(abs, 0)
	if open != nil && !Tolerable(open) {
		return errdefs.New(errdefs.CantWrite, open)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		if info.Mode()&os.ModeSticky != 0 {
			return errdefs.New(errdefs.CantWrite, &UnsafeError{Path: abs, Reason: fmt.Sprintf("writable by %s (mode %04o)", others(perm), modeBits(info))})
		}
		open = &UnsafeError{Path: abs, Reason: fmt.Sprintf("writable by %s and not sticky (mode %04o)", others(perm), modeBits(info)), Open: true}
	}
	return errdefs.New(errdefs.CantWrite, open)
}

// maxLinks bounds the symbolic links followed in one check.
const maxLinks = 16

// checkChain checks every component of the absolute path abs.
// A directory only open to others does not end the walk: a worse problem
// below is returned first, else the first open one.
func checkChain(abs string, links int) error {
	var open error
	cur := string(filepath.Separator)
	if err := checkComponent(cur, nil); Tolerable(err) {
		open = err
	} else if err != nil {
		return err
	}
	rest := abs[len(filepath.VolumeName(abs)):]
	for _, name := range splitPath(rest) {
		cur = filepath.Join(cur, name)
		info, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			if err := ownerCheck(cur, info, "a symbolic link"); err != nil {
				return err
			}
			if links >= maxLinks {
				return &UnsafeError{Path: cur, Reason: "too many symbolic links"}
			}
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return err
			}
			if err := checkChain(real, links+1); Tolerable(err) {
				open = cmp.Or(open, err)
			} else if err != nil {
				return err
			}
			continue
		}
		if err := checkComponent(cur, info); Tolerable(err) {
			open = cmp.Or(open, err)
		} else if err != nil {
			return err
		}
	}
	return open
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// checkComponent checks one directory on the way (info from Lstat; nil:
// Lstat it).
func checkComponent(path string, info os.FileInfo) error {
	if info == nil {
		var err error
		if info, err = os.Lstat(path); err != nil {
			return err
		}
	}
	if !info.IsDir() {
		return &UnsafeError{Path: path, Reason: "not a directory"}
	}
	if err := ownerCheck(path, info, "a directory"); err != nil {
		return err
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 && info.Mode()&os.ModeSticky == 0 {
		return &UnsafeError{Path: path, Reason: fmt.Sprintf("writable by %s and not sticky (mode %04o)", others(perm), modeBits(info)), Open: true}
	}
	return nil
}

// ownerCheck refuses a file the user and root do not own.
func ownerCheck(path string, info os.FileInfo, what string) error {
	uid, ok := ownerOf(info)
	if !ok {
		return nil // no owners on this platform
	}
	if me := os.Geteuid(); uid != me && uid != 0 {
		return &UnsafeError{Path: path, Reason: fmt.Sprintf("%s owned by %s, not by you (%s)", what, Describe(uid), Describe(me))}
	}
	return nil
}

// Describe names a uid: "uid 65534 (nobody)".
func Describe(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

func others(perm os.FileMode) string {
	switch {
	case perm&0o022 == 0o022:
		return "group and others"
	case perm&0o002 != 0:
		return "others"
	default:
		return "group"
	}
}

// modeBits is the mode with the sticky bit as 01000, as chmod writes it.
func modeBits(info os.FileInfo) uint32 {
	m := uint32(info.Mode().Perm())
	if info.Mode()&os.ModeSticky != 0 {
		m |= 0o1000
	}
	if info.Mode()&os.ModeSetgid != 0 {
		m |= 0o2000
	}
	return m
}

// shared reports whether a cache directory is a shared one: sticky,
// writable by others, and owned by another user.
func shared(info os.FileInfo) bool {
	if !owners {
		return false
	}
	uid, ok := ownerOf(info)
	return ok && uid != os.Geteuid() && info.Mode()&os.ModeSticky != 0 && info.Mode().Perm()&0o002 != 0
}
