package pypi

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/cachedir"
)

// pipDefaultMemoAge is how long a remembered answer of the machine's pip
// (its default index) is used before pip is asked again.
const pipDefaultMemoAge = 24 * time.Hour

// pipDefaultMemoFile is the memo's name in its directory.
const pipDefaultMemoFile = "pip-default-index"

// WithPipDefaultMemo remembers the machine's pip's answer (its default
// index, asked when the configuration names none) in dir, the current
// user's cache (a directory of its own is made in it, checked as
// cachedir.Make checks, or nothing is remembered): asking starts a Python
// (tens to hundreds of milliseconds), which a resolution from the lock and
// the cache would otherwise pay on every run. The answer is used while
// python3 on $PATH is the same file (path, size, mtime, inode) and for at
// most a day; "" remembers nothing.
func WithPipDefaultMemo(dir string) ConfigOption {
	return func(o *configOptions) error { o.memoDir = dir; return nil }
}

// memoized wraps ask with the memo in dir (see WithPipDefaultMemo).
func memoized(dir string, getenv func(string) (string, bool), ask func(context.Context) (string, error)) func(context.Context) (string, error) {
	if dir == "" || ask == nil {
		return ask
	}
	return func(ctx context.Context) (string, error) {
		key := python3Key(getenv)
		if key == "" {
			return ask(ctx)
		}
		memo := filepath.Join(cachedir.At(dir).Dir(cachedir.DirPython), pipDefaultMemoFile)
		if u, ok := readMemo(memo, key); ok {
			return u, nil
		}
		u, err := ask(ctx)
		if err == nil && u != "" {
			writeMemo(memo, key, u)
		}
		return u, err
	}
}

// python3Key names the python3 that $PATH finds: its resolved path and its
// file's size, mtime and inode; "" when there is none.
func python3Key(getenv func(string) (string, bool)) string {
	pathEnv, _ := getenv("PATH")
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "python3")
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return ""
		}
		ino := ""
		if id, ok := fileID(st); ok {
			ino = id
		}
		return fmt.Sprintf("%s %s %d %d %s", p, real, st.Size(), st.ModTime().UnixNano(), ino)
	}
	return ""
}

// readMemo reads the memo at path: the URL when its key is key, it is a
// regular file of the user's or root's, and it is younger than a day.
func readMemo(path, key string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !cachedir.TrustedOwner(st) || time.Since(st.ModTime()) > pipDefaultMemoAge || time.Until(st.ModTime()) > time.Minute {
		return "", false
	}
	data, err := io.ReadAll(io.LimitReader(f, 8<<10))
	if err != nil {
		return "", false
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "v1" || lines[1] != key {
		return "", false
	}
	u := lines[2]
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return "", false
	}
	return u, true
}

// writeMemo writes the memo (temp file and rename), best effort: a memo
// that cannot be written is asked for again next time.
func writeMemo(path, key, u string) {
	dir := filepath.Dir(path)
	if err := cachedir.Make(dir); err != nil && !cachedir.Tolerable(err) {
		return
	}
	f, err := os.CreateTemp(dir, ".pip-default-*")
	if err != nil {
		return
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	_, err = fmt.Fprintf(f, "v1\n%s\n%s\n", key, u)
	if cerr := f.Close(); err == nil && cerr == nil {
		_ = os.Rename(f.Name(), path)
	}
}
