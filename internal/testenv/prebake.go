package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The CLI is built once per test binary (process) into prebakeDir.
var (
	prebakeOnce sync.Once
	prebakeBin  string
	prebakeErr  error
)

const prebakeDirPrefix = "prebake-testbin-"

// Prebake returns the path of a prebake CLI built from this checkout, once
// per test binary. It is an integration test's tool: it calls RequireIT,
// so no unit test builds the CLI. The binary lives in a directory of its
// own (mode 0755, so a process of another user can run it); Main removes it
// at the end of the test binary, and the next build removes those left by
// a test binary that had no Main and has exited.
func Prebake(t testing.TB) string {
	t.Helper()
	RequireIT(t)
	bin, err := BuildPrebake()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildPrebake is Prebake for a TestMain: it builds the CLI once per
// process (or copies $PREBAKE_BIN, the binary make test built once) and
// returns its path, or the build's error.
func BuildPrebake() (string, error) {
	prebakeOnce.Do(func() {
		sweepPrebakeDirs()
		dir, err := os.MkdirTemp("", prebakeDirPrefix+strconv.Itoa(os.Getpid())+"-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			prebakeErr = err
			return
		}
		bin := filepath.Join(dir, "prebake")
		if built := os.Getenv("PREBAKE_BIN"); built != "" {
			// make test builds the CLI once for every test binary: a copy
			// in this directory, which other users can reach.
			if err := copyExecutable(built, bin); err != nil {
				prebakeErr = fmt.Errorf("PREBAKE_BIN: %w", err)
				return
			}
			prebakeBin = bin
			return
		}
		out, err := exec.Command("go", "build", "-o", bin, "github.com/prebake/prebake/cmd/prebake").CombinedOutput()
		if err != nil {
			prebakeErr = fmt.Errorf("go build ./cmd/prebake: %v\n%s", err, out)
			return
		}
		prebakeBin = bin
	})
	return prebakeBin, prebakeErr
}

// Main runs the tests of m, stops what AtExit registered, removes the CLI Prebake built and exits with
// m's code: func TestMain(m *testing.M) { testenv.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	RunAtExit()
	RemovePrebake()
	os.Exit(code)
}

// RemovePrebake removes the CLI Prebake built, if any (for a TestMain that
// does more than Main).
func RemovePrebake() {
	if prebakeBin != "" {
		_ = os.RemoveAll(filepath.Dir(prebakeBin))
	}
}

// sweepPrebakeDirs removes the build directories of test binaries that
// have exited (their pid is in the name).
func sweepPrebakeDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prebakeDirPrefix+"*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), prebakeDirPrefix), "-")
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() {
			if _, err := os.Stat(filepath.Join("/proc", pid)); os.IsNotExist(err) {
				_ = os.RemoveAll(d)
			}
		}
	}
}

// copyExecutable copies the regular file src to dst (mode 0755).
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
