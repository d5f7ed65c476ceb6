// Package e2e holds the newcomer test: on a fresh clone, follow the README
// literally.
package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// Marker is the HTML comment that marks the next fenced ```bash block of
// README.md or a page under docs/ as one the newcomer test runs.
const Marker = "<!-- e2e -->"

// BlockPages are the pages whose marked blocks the newcomer test runs, in
// this order (a later block may use what an earlier one made). A marked
// block on any other page fails TestBlockPages.
var BlockPages = []string{"README.md", "docs/usage.md", "docs/design.md"}

// Block is one marked README code block.
type Block struct {
	Line int // 1-based line of the opening fence
	Code string
}

// ReadmeBlocks returns the ```bash blocks preceded by Marker (blank lines
// between them allowed), in order.
func ReadmeBlocks(readme []byte) ([]Block, error) {
	var blocks []Block
	sc := bufio.NewScanner(bytes.NewReader(readme))
	n, marked := 0, false
	var cur *Block
	var code strings.Builder
	for sc.Scan() {
		n++
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case cur != nil:
			if trim == "```" {
				cur.Code = code.String()
				blocks = append(blocks, *cur)
				cur = nil
				code.Reset()
				continue
			}
			code.WriteString(line)
			code.WriteByte('\n')
		case trim == Marker:
			marked = true
		case marked && trim == "":
		case marked && strings.HasPrefix(trim, "```"):
			if lang := strings.TrimPrefix(trim, "```"); lang != "bash" {
				return nil, fmt.Errorf("line %d: a marked block must be ```bash, not ```%s", n, lang)
			}
			cur = &Block{Line: n}
			marked = false
		case marked:
			return nil, fmt.Errorf("line %d: %s must be followed by a ```bash block", n, Marker)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: unterminated code block", cur.Line)
	}
	return blocks, sc.Err()
}

func TestReadmeBlocksParse(t *testing.T) {
	in := "# x\n<!-- e2e -->\n\n```bash\necho a\necho b\n```\n```bash\nnot marked\n```\n<!-- e2e -->\n```bash\necho c\n```\n"
	got, err := ReadmeBlocks([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Code != "echo a\necho b\n" || got[0].Line != 4 || got[1].Code != "echo c\n" {
		t.Errorf("blocks %+v", got)
	}
	if _, err := ReadmeBlocks([]byte("<!-- e2e -->\n```sh\nx\n```\n")); err == nil {
		t.Error("a marked ```sh block is accepted")
	}
}

// repoRoot is the checkout this test runs in.
func repoRoot(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s %s (in %s) failed after %s: %v\n%s", name, strings.Join(args, " "), dir, time.Since(start).Round(time.Millisecond), err, out.String())
	}
	return out.String()
}

// TestNewcomer clones the repository (what is committed: a `git clone` of
// this checkout) into a temp dir and follows the README: `make demo`, then
// every marked ```bash block, in order, in one bash with -euo pipefail.
// PREBAKE_E2E_WORKTREE=1 overlays the checkout's uncommitted files on the
// clone, to try README changes before they are committed.
func TestNewcomer(t *testing.T) {
	testenv.RequireIT(t)
	for _, tool := range []string{"git", "make", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	src := repoRoot(t)
	clone := filepath.Join(t.TempDir(), "prebake")
	// A clean environment, as a newcomer's: no prebake settings, a fresh
	// prebake cache, no Spark; HOME in the temp dir so ~/.m2 is empty.
	home := filepath.Join(filepath.Dir(clone), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "PREBAKE_"), k == "SPARK_HOME", k == "SPARK_CONF_DIR", k == "HOME",
			k == "DEFAULT_ARTIFACT_REPOSITORY", k == "GOFLAGS", k == "MAKEFLAGS", k == "MFLAGS", k == "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	gocache := run(t, src, os.Environ(), "go", "env", "GOCACHE")
	gomodcache := run(t, src, os.Environ(), "go", "env", "GOMODCACHE")
	env = append(env, "HOME="+home, "PREBAKE_CACHE="+filepath.Join(home, ".cache", "prebake"),
		"GOCACHE="+strings.TrimSpace(gocache), "GOMODCACHE="+strings.TrimSpace(gomodcache))

	run(t, filepath.Dir(clone), env, "git", "clone", "--quiet", src, clone)
	if os.Getenv("PREBAKE_E2E_WORKTREE") == "1" {
		overlayWorktree(t, src, clone)
	}
	readme, err := os.ReadFile(filepath.Join(clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	type pageBlock struct {
		page string
		Block
	}
	var blocks []pageBlock
	for _, page := range BlockPages {
		text, err := os.ReadFile(filepath.Join(clone, page))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := ReadmeBlocks(text)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, b := range bs {
			blocks = append(blocks, pageBlock{page, b})
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("the docs (as committed) have no %s blocks to follow", Marker)
	}
	if !bytes.Contains(readme, []byte("make demo")) || !bytes.Contains(readme, []byte("make test")) {
		t.Fatal("README.md must give the set-up: make demo and make test")
	}

	out := run(t, clone, env, "make", "demo")
	if _, err := os.Stat(filepath.Join(clone, ".demo", "prebake.lock")); err != nil {
		t.Fatalf("make demo wrote no .demo/prebake.lock: %v\n%s", err, out)
	}

	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '=== %s:%d (e2e block %d of %d)' >&2\n", b.page, b.Line, i+1, len(blocks))
		script.WriteString("set -x\n")
		script.WriteString(b.Code)
		script.WriteString("{ set +x; } 2>/dev/null\n")
	}
	path := filepath.Join(filepath.Dir(clone), "readme-e2e.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out = run(t, clone, env, "bash", path)
	t.Logf("ran %d marked blocks:\n%s", len(blocks), tail(out, 40))
}

// overlayWorktree copies the checkout's modified and untracked (not
// ignored) files over the clone, and removes files deleted in the checkout.
func overlayWorktree(t *testing.T, src, clone string) {
	t.Helper()
	list := run(t, src, os.Environ(), "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, rel := range strings.Split(strings.TrimRight(list, "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		from, to := filepath.Join(src, rel), filepath.Join(clone, rel)
		fi, err := os.Lstat(from)
		if os.IsNotExist(err) {
			os.Remove(to)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
