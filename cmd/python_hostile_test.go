package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/lock"
	blobcache "github.com/prebake/prebake/resolver/cache"
)

// hostileIndex is a PEP 691 index over httptest whose answers a test
// sets: files maps a wheel name to the bytes served and claimed is the
// sha256 the page gives (the bytes' own when absent); page, when set,
// answers every project page.
type hostileIndex struct {
	*httptest.Server
	mu      sync.Mutex
	files   map[string][]byte
	claimed map[string]string
	// sizes are PEP 700 sizes the page claims (none when absent).
	sizes  map[string]int
	page   http.HandlerFunc
	fileFn http.HandlerFunc
	// auths are the Authorization headers the index saw.
	auths []string
}

func newHostileIndex(t *testing.T) *hostileIndex {
	ix := &hostileIndex{files: map[string][]byte{}, claimed: map[string]string{}, sizes: map[string]int{}}
	ix.Server = httptest.NewServer(http.HandlerFunc(ix.serve))
	t.Cleanup(ix.Close)
	return ix
}

func (ix *hostileIndex) serve(w http.ResponseWriter, r *http.Request) {
	ix.mu.Lock()
	ix.auths = append(ix.auths, r.Header.Get("Authorization"))
	page, fileFn := ix.page, ix.fileFn
	ix.mu.Unlock()
	if name, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
		if fileFn != nil {
			fileFn(w, r)
			return
		}
		ix.mu.Lock()
		b, ok := ix.files[name]
		ix.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
		return
	}
	if page != nil {
		page(w, r)
		return
	}
	project := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
	type file struct {
		Filename string            `json:"filename"`
		URL      string            `json:"url"`
		Hashes   map[string]string `json:"hashes"`
		Size     *int              `json:"size,omitempty"`
	}
	var out []file
	ix.mu.Lock()
	for name, b := range ix.files {
		if strings.HasPrefix(name, project+"-") {
			sum := ix.claimed[name]
			if sum == "" {
				sum = sha256Of(b)
			}
			f := file{Filename: name, URL: "/files/" + name, Hashes: map[string]string{"sha256": sum}}
			if n, ok := ix.sizes[name]; ok {
				f.Size = &n
			}
			out = append(out, f)
		}
	}
	ix.mu.Unlock()
	if len(out) == 0 {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
	json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.1"}, "name": project, "files": out})
}

// pipEnv points pip's configuration at index (with userinfo when given)
// and nothing else, and leaves no uv anywhere (a fully pinned input needs
// none); it returns a temporary directory.
func pipEnv(t *testing.T, index string) string {
	dir := t.TempDir()
	t.Setenv("PIP_CONFIG_FILE", os.DevNull)
	t.Setenv("PIP_INDEX_URL", index)
	t.Setenv("PIP_EXTRA_INDEX_URL", "")
	t.Setenv("PIP_FIND_LINKS", "")
	t.Setenv("PIP_NO_INDEX", "")
	t.Setenv("PREBAKE_UV", "")
	t.Setenv("PREBAKE_CI_CACHE", filepath.Join(dir, "no-ci-cache"))
	t.Setenv("PATH", filepath.Join(dir, "no-bin"))
	return dir
}

// resolvePy runs prebake resolve on the Python half alone (reqs), with a
// deadline: an input that blocks (a FIFO) fails the test instead of
// hanging it.
func resolvePy(t *testing.T, dir, reqs string, extra ...string) (stdout, stderr string, code int) {
	t.Helper()
	args := append([]string{"resolve", "--no-default-repositories", "--py-requirements", reqs,
		"--python-version", "3.11", "--python-platform", "manylinux_2_36_x86_64",
		"--lock", filepath.Join(dir, "prebake.lock"), "--cache", filepath.Join(dir, "cache")}, extra...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdout, stderr, code = runCLI(t, args...)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("prebake %s: still running after 30s (blocked on an input?)", strings.Join(args, " "))
	}
	return stdout, stderr, code
}

// checkNothingWritten fails when the lock exists or a blob or a
// temporary file was left in the cache.
func checkNothingWritten(t *testing.T, dir string, blobs ...[]byte) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "prebake.lock")); !os.IsNotExist(err) {
		t.Errorf("a lock was written (%v)", err)
	}
	for _, b := range blobs {
		if _, err := os.Stat(blobcache.BlobPath(filepath.Join(dir, "cache"), sha256Of(b))); err == nil {
			t.Errorf("the refused file (sha256 %s) is in the cache", sha256Of(b))
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "cache", "tmp", "*")); len(tmp) != 0 {
		t.Errorf("temporary files left in the cache: %v", tmp)
	}
}

// TestPythonHostileWheels: prebake resolve --py-requirements refuses a
// wheel whose members or RECORD escape the install root (../, absolute),
// a symbolic link member, a RECORD hash or size mismatch, a zip bomb and
// duplicate members: exit 65, naming the requirements line, the wheel and
// the member; no lock, nothing in the cache.
func TestPythonHostileWheels(t *testing.T) {
	const file = "evil-1.0-py3-none-any.whl"
	for _, h := range sitepkgstest.HostileWheels(t, "evil", "1.0") {
		t.Run(h.Case, func(t *testing.T) {
			ix := newHostileIndex(t)
			ix.files[file] = h.Data
			dir := pipEnv(t, ix.URL+"/simple/")
			reqs := filepath.Join(dir, "requirements.txt")
			must(t, os.WriteFile(reqs, []byte("evil==1.0 --hash=sha256:"+sha256Of(h.Data)+"\n"), 0o644))
			_, stderr, code := resolvePy(t, dir, reqs)
			t.Logf("exit %d: %s", code, stderr)
			if code != exitcode.DataErr {
				t.Errorf("exit %d, want 65\n%s", code, stderr)
			}
			for _, s := range []string{reqs + ":1", file, h.Says} {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			checkNothingWritten(t, dir, h.Data)
		})
	}
}

// TestPythonHostileInputs: requirements files that include themselves
// (directly, in a cycle), a FIFO (named or included: refused before it is
// opened, so nothing blocks), a device, a huge file: exit 65 naming the
// file; nothing written.
func TestPythonHostileInputs(t *testing.T) {
	ix := newHostileIndex(t)
	dir := pipEnv(t, ix.URL+"/simple/")
	in := filepath.Join(dir, "in")
	must(t, os.MkdirAll(in, 0o755))
	write := func(name, body string) string {
		p := filepath.Join(in, name)
		must(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	self := write("self.txt", "six==1.16.0\n-r self.txt\n")
	cycleA := write("a.txt", "-r b.txt\n")
	write("b.txt", "six==1.16.0\n-c a.txt\n")
	fifo := filepath.Join(in, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	inclFifo := write("incl-fifo.txt", "six==1.16.0\n-r fifo.txt\n")
	huge := write("huge.txt", strings.Repeat("# padding\n", 300_000))
	for _, tc := range []struct {
		name, reqs string
		says       []string
	}{
		{"includes itself", self, []string{self + ":2", "includes itself"}},
		{"cycle", cycleA, []string{"includes itself", cycleA, filepath.Join(in, "b.txt")}},
		{"FIFO", fifo, []string{fifo, "named pipe (FIFO)"}},
		{"FIFO included", inclFifo, []string{inclFifo + ":2", "named pipe (FIFO)"}},
		{"device", "/dev/zero", []string{"/dev/zero", "character device"}},
		{"huge", huge, []string{huge, "larger than the limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, stderr, code := resolvePy(t, out, tc.reqs)
			t.Logf("exit %d: %s", code, stderr)
			if code != exitcode.DataErr {
				t.Errorf("exit %d, want 65\n%s", code, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			checkNothingWritten(t, out)
		})
	}
}

// TestPythonHostileIndex: an index that answers an HTML login page or
// JSON that does not parse (65), 429 with a Retry-After longer than
// --max-retry-wait (76, at once), 403 (77), 5xx after retries (69), a
// wheel whose bytes are not the sha256 the index claims (65): each names
// the index or the file, never the index's password; nothing written. A
// wheel URL redirected to another host is fetched without the index's
// credentials.
func TestPythonHostileIndex(t *testing.T) {
	wheelData := buildWheel(t, "six", "1.16.0", "py2.py3-none-any")
	const six = "six-1.16.0-py2.py3-none-any.whl"
	for _, tc := range []struct {
		name  string
		setup func(ix *hostileIndex)
		extra []string
		code  int
		says  []string
		max   time.Duration
	}{
		{"HTML login page", func(ix *hostileIndex) {
			ix.page = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html><head><title>Sign in</title></head><body><form>password</form></body></html>")
			}
		}, nil, exitcode.DataErr, []string{"/simple/six/", "not a simple repository API page", "Sign in"}, 0},
		{"malformed JSON", func(ix *hostileIndex) {
			ix.page = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
				fmt.Fprint(w, `{"meta": {"api-version": "1.1"}, "files": [`)
			}
		}, nil, exitcode.DataErr, []string{"/simple/six/", "does not parse"}, 0},
		{"429 with a long Retry-After", func(ix *hostileIndex) {
			ix.page = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}, []string{"--max-retry-wait", "5s"}, exitcode.RateLimited, []string{"429", "/simple/six/", "rate-limiting"}, 10 * time.Second},
		{"429, --max-retry-wait 0", func(ix *hostileIndex) {
			ix.page = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}, []string{"--max-retry-wait", "0"}, exitcode.RateLimited, []string{"429", "/simple/six/"}, 5 * time.Second},
		{"403", func(ix *hostileIndex) {
			ix.page = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }
		}, nil, exitcode.NoPerm, []string{"403", "/simple/six/"}, 0},
		{"503", func(ix *hostileIndex) {
			ix.page = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }
		}, nil, exitcode.Unavailable, []string{"503", "/simple/six/"}, 0},
		{"wheel hash not the index's", func(ix *hostileIndex) {
			ix.claimed[six] = sha256Of([]byte("other bytes"))
		}, nil, exitcode.DataErr, []string{six, "hash mismatch", sha256Of(wheelData)}, 0},
		{"wheel size not the index's", func(ix *hostileIndex) {
			ix.sizes[six] = len(wheelData) + 1
		}, nil, exitcode.DataErr, []string{six, fmt.Sprintf("%d bytes, the index says %d", len(wheelData), len(wheelData)+1)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := newHostileIndex(t)
			ix.files[six] = wheelData
			tc.setup(ix)
			dir := pipEnv(t, strings.Replace(ix.URL, "http://", "http://team:s3cret@", 1)+"/simple/")
			reqs := filepath.Join(dir, "requirements.txt")
			must(t, os.WriteFile(reqs, []byte("six==1.16.0 --hash=sha256:"+sha256Of(wheelData)+"\n"), 0o644))
			start := time.Now()
			_, stderr, code := resolvePy(t, dir, reqs, tc.extra...)
			t.Logf("exit %d in %s: %s", code, time.Since(start).Round(time.Millisecond), stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			if tc.max > 0 && time.Since(start) > tc.max {
				t.Errorf("took %s, want at most %s (no wait past --max-retry-wait)", time.Since(start), tc.max)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			if strings.Contains(stderr, "s3cret") {
				t.Errorf("stderr shows the index's password:\n%s", stderr)
			}
			checkNothingWritten(t, dir, wheelData)
		})
	}

	t.Run("redirect to another host", func(t *testing.T) {
		var mu sync.Mutex
		var leaked []string
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if a := r.Header.Get("Authorization"); a != "" {
				leaked = append(leaked, a)
			}
			mu.Unlock()
			w.Write(wheelData)
		}))
		t.Cleanup(other.Close)
		ix := newHostileIndex(t)
		ix.files[six] = wheelData
		ix.fileFn = func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/cdn/"+six, http.StatusFound)
		}
		dir := pipEnv(t, strings.Replace(ix.URL, "http://", "http://team:s3cret@", 1)+"/simple/")
		reqs := filepath.Join(dir, "requirements.txt")
		must(t, os.WriteFile(reqs, []byte("six==1.16.0 --hash=sha256:"+sha256Of(wheelData)+"\n"), 0o644))
		out, stderr, code := resolvePy(t, dir, reqs, "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if len(leaked) != 0 {
			t.Errorf("the other host got the index's credentials: %q", leaked)
		}
		if ix.auths[0] == "" {
			t.Errorf("the index got no credentials")
		}
		if strings.Contains(out+stderr, "s3cret") {
			t.Errorf("the output shows the index's password:\n%s%s", out, stderr)
		}
	})
}

// TestOutdatedWheels: outdated lists a v2 lock's direct wheels as
// pypi/<name> with the newer versions that have a wheel for the lock's
// target (not another platform's); --offline leaves them out with a
// note; --write and --set would drop the Python half: 64, lock kept.
func TestOutdatedWheels(t *testing.T) {
	ix, reqs, dir := pyFixture(t)
	lockPath, cache := filepath.Join(dir, "py.lock"), filepath.Join(dir, "cache")
	if _, stderr, code := runCLI(t, "resolve", "--py-requirements", reqs, "--python-version", "3.11", "--python-platform", "manylinux_2_36_x86_64",
		"--lock", lockPath, "--cache", cache, "--no-default-repositories"); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	ix.Add("six", "six-1.17.0-py2.py3-none-any.whl", buildWheel(t, "six", "1.17.0", "py2.py3-none-any"))
	ix.Add("six", "six-1.10.0-py2.py3-none-any.whl", buildWheel(t, "six", "1.10.0", "py2.py3-none-any"))
	ix.Add("six", "six-2.0.0b1-py2.py3-none-any.whl", buildWheel(t, "six", "2.0.0b1", "py2.py3-none-any"))
	ix.Add("fastmath", "fastmath-3.0-cp311-cp311-macosx_11_0_arm64.whl", buildWheel(t, "fastmath", "3.0", "cp311-cp311-macosx_11_0_arm64"))
	before, _ := os.ReadFile(lockPath)

	out, stderr, code := runCLI(t, "outdated", "--lock", lockPath, "--no-default-repositories", "-o", "json")
	if code != 0 {
		t.Fatalf("outdated: exit %d\n%s", code, stderr)
	}
	var j struct {
		Packages []struct {
			Module, Current, Latest string
			Newer                   []string
		}
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(j.Packages)
	if want := "[{pypi/fastmath 2.0.1  []} {pypi/six 1.16.0 1.17.0 [1.17.0]}]"; got != want {
		t.Errorf("packages %s, want %s", got, want)
	}
	if out, stderr, code := runCLI(t, "outdated", "--lock", lockPath, "--no-default-repositories"); code != 0 || !strings.Contains(out, "pypi/six") || !strings.Contains(out, "1.17.0") {
		t.Errorf("text: exit %d\n%s%s", code, out, stderr)
	}
	ix.Requests.Store(0)
	if out, stderr, code := runCLI(t, "outdated", "--lock", lockPath, "--no-default-repositories", "--offline", "--cache", cache); code != 0 || strings.Contains(out, "pypi/") || !strings.Contains(stderr, "not listed") || ix.Requests.Load() != 0 {
		t.Errorf("offline: exit %d, %d index requests\n%s%s", code, ix.Requests.Load(), out, stderr)
	}
	for _, extra := range [][]string{{"--write"}, {"--set", "a:b:1"}} {
		_, stderr, code := runCLI(t, append([]string{"outdated", "--lock", lockPath, "--no-default-repositories"}, extra...)...)
		if code != exitcode.Usage || !strings.Contains(stderr, "--py-requirements") {
			t.Errorf("%v: exit %d, want 64 saying to resolve with --py-requirements\n%s", extra, code, stderr)
		}
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
		t.Error("the lock was rewritten")
	}
}

// TestBundlePython: bundle export carries a v2 lock's jars and wheels,
// bundle import restores them into another cache with the lock (checked
// by its hash), and an offline resolve from there asks no index; a wheel
// gone from the cache is 69 at export, naming it and the way out.
func TestBundlePython(t *testing.T) {
	ix, reqs, dir := pyFixture(t)
	demo, err := filepath.Abs(filepath.Join("..", "testdata", "demo-repo"))
	if err != nil {
		t.Fatal(err)
	}
	cache, lockPath := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
	target := []string{"--python-version", "3.11", "--python-platform", "manylinux_2_36_x86_64"}
	resolve := append([]string{"resolve", "--no-default-repositories", "--repositories", "file://" + demo + "/", "--packages", "org.slf4j:slf4j-api:2.0.7",
		"--py-requirements", reqs}, target...)
	if _, stderr, code := runCLI(t, append(resolve, "--lock", lockPath, "--cache", cache)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	tarPath := filepath.Join(dir, "b.tar")
	out, stderr, code := runCLI(t, "bundle", "export", "--lock", lockPath, "--cache", cache, "--no-default-repositories", "--repositories", "file://"+demo+"/", "--to", tarPath, "-o", "json")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, `"jars":1`) || !strings.Contains(out, `"wheels":2`) {
		t.Errorf("export json: %s", out)
	}
	cache2, lock2 := filepath.Join(dir, "cache2"), filepath.Join(dir, "imported.lock")
	out, stderr, code = runCLI(t, "bundle", "import", tarPath, "--cache", cache2, "--lock", lock2)
	if code != 0 || !strings.Contains(out, "imported 1 jars, 2 wheels") {
		t.Fatalf("import: exit %d\n%s%s", code, out, stderr)
	}
	want, _ := os.ReadFile(lockPath)
	if got, _ := os.ReadFile(lock2); string(got) != string(want) {
		t.Errorf("the imported lock differs:\n%s", got)
	}
	ix.Requests.Store(0)
	if _, stderr, code := runCLI(t, append(resolve, "--lock", lock2, "--cache", cache2, "--offline", "--frozen")...); code != 0 || ix.Requests.Load() != 0 {
		t.Errorf("offline from the imported cache: exit %d, %d index requests\n%s", code, ix.Requests.Load(), stderr)
	}
	// A wheel blob gone: 69 naming it.
	lf, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	w := lf.Wheels()[0]
	if err := os.Remove(blobcache.BlobPath(cache, w.Sha256)); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "bundle", "export", "--lock", lockPath, "--cache", cache, "--no-default-repositories", "--repositories", "file://"+demo+"/", "--to", filepath.Join(dir, "c.tar"))
	if code != exitcode.Unavailable || !strings.Contains(stderr, w.File) || !strings.Contains(stderr, "--py-requirements") {
		t.Errorf("wheel gone: exit %d, want 69 naming %s\n%s", code, w.File, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.tar")); !os.IsNotExist(err) {
		t.Errorf("wheel gone: a bundle was written (%v)", err)
	}
}
