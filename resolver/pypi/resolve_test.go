package pypi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/resolver/cache"
)

// testTarget is CPython 3.11 on x86_64 with glibc 2.36 (Debian bookworm).
var testTarget = Target{Target: wheel.Target{PythonVersion: "3.11", Platform: "x86_64", Glibc: "2.36"}, PythonFullVersion: "3.11.2"}

// noUV is an environment with no uv anywhere.
func noUV(t testing.TB) func(string) (string, bool) {
	dir := t.TempDir()
	return func(k string) (string, bool) {
		switch k {
		case "PATH":
			return dir, true
		case "PREBAKE_CI_CACHE":
			return dir, true
		}
		return "", false
	}
}

func newTestResolver(t testing.TB, cfg *IndexConfig, opts ...Option) (*Resolver, *cache.Cache) {
	t.Helper()
	c, err := cache.Open(t.TempDir(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(cfg, WithRetries(2, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewResolver(cfg, c, append([]Option{WithIndexClient(cl), WithUVEnv(noUV(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readReqs(t testing.TB, text string) *Input {
	t.Helper()
	in, err := ReadRequirements(context.Background(), writeFile(t, t.TempDir(), "requirements.txt", text))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// demoIndex serves demo 1.0 (a manylinux wheel, a pure one, a macOS one
// and an sdist) and six 1.16.0 (pure).
func demoIndex(t testing.TB, html bool) (*fakeIndex, map[string][]byte) {
	ix := newFakeIndex(t, html)
	w := map[string][]byte{
		"demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl": testWheel(t, "demo", "1.0", "cp311-cp311-manylinux_2_17_x86_64"),
		"demo-1.0-py3-none-any.whl":                      testWheel(t, "demo", "1.0", "py3-none-any"),
		"demo-1.0-cp311-cp311-macosx_11_0_arm64.whl":     testWheel(t, "demo", "1.0", "cp311-cp311-macosx_11_0_arm64"),
		"six-1.16.0-py2.py3-none-any.whl":                testWheel(t, "six", "1.16.0", "py2.py3-none-any"),
		"demo-1.0-cp312-cp312-manylinux_2_17_x86_64.whl": testWheel(t, "demo", "1.0", "cp312-cp312-manylinux_2_17_x86_64"),
	}
	for name, body := range w {
		project := "demo"
		if strings.HasPrefix(name, "six") {
			project = "six"
		}
		ix.add(project, fakeFile{name: name, body: body})
	}
	ix.add("demo", fakeFile{name: "demo-1.0.tar.gz", body: []byte("sdist")})
	return ix, w
}

func hashLine(name, version string, bodies ...[]byte) string {
	s := name + "==" + version
	for _, b := range bodies {
		s += " --hash=sha256:" + sha256Hex(b)
	}
	return s + "\n"
}

// TestResolvePinned resolves a hash-pinned requirements file against a
// JSON and an HTML index with no uv anywhere: the manylinux wheel is
// chosen over the pure and macOS ones, both wheels are fetched once into
// the cache, and a second run downloads nothing.
func TestResolvePinned(t *testing.T) {
	for _, html := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "html"}[html], func(t *testing.T) {
			ix, w := demoIndex(t, html)
			ml := "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
			six := "six-1.16.0-py2.py3-none-any.whl"
			in := readReqs(t, hashLine("six", "1.16.0", w[six])+hashLine("Demo", "1.0", w[ml], w["demo-1.0-py3-none-any.whl"]))
			r, c := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
			got, err := r.Resolve(context.Background(), in, testTarget)
			if err != nil {
				t.Fatal(err)
			}
			want := []Wheel{
				{Name: "demo", Version: "1.0", File: ml, URL: ix.URL + "/files/" + ml, Sha256: sha256Hex(w[ml]), Size: int64(len(w[ml])), Index: ix.simple()},
				{Name: "six", Version: "1.16.0", File: six, URL: ix.URL + "/files/" + six, Sha256: sha256Hex(w[six]), Size: int64(len(w[six])), Index: ix.simple()},
			}
			if d := cmp.Diff(want, got, cmpopts.IgnoreFields(Wheel{}, "Path")); d != "" {
				t.Errorf("wheels (-want +got):\n%s", d)
			}
			for _, g := range got {
				if g.Path != c.BlobPath(g.Sha256) {
					t.Errorf("%s: path %s, want the cache's blob", g.File, g.Path)
				}
				if err := cache.VerifyBlob(c.Dir, g.Sha256, g.Size); err != nil {
					t.Error(err)
				}
			}
			if n := ix.downloads.Load(); n != 2 {
				t.Errorf("%d downloads, want 2", n)
			}
			if _, err := r.Resolve(context.Background(), in, testTarget); err != nil {
				t.Fatal(err)
			}
			if n := ix.downloads.Load(); n != 2 {
				t.Errorf("%d downloads after a warm run, want 2", n)
			}
		})
	}
}

// TestResolveSkips: a yanked wheel and one whose requires-python excludes
// the target are passed over for the pure wheel.
func TestResolveSkips(t *testing.T) {
	for _, html := range []bool{false, true} {
		ix := newFakeIndex(t, html)
		pure := testWheel(t, "demo", "2.0", "py3-none-any")
		ix.add("demo",
			fakeFile{name: "demo-2.0-cp311-cp311-manylinux_2_17_x86_64.whl", body: testWheel(t, "demo", "2.0", "cp311-cp311-manylinux_2_17_x86_64"), yanked: true},
			fakeFile{name: "demo-2.0-cp311-abi3-manylinux_2_17_x86_64.whl", body: testWheel(t, "demo", "2.0", "cp311-abi3-manylinux_2_17_x86_64"), requiresPython: ">=3.12"},
			fakeFile{name: "demo-2.0-py3-none-any.whl", body: pure, requiresPython: ">=3.8"})
		r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
		in := &Input{Format: FormatRequirements, File: "r.txt", Requirements: []Requirement{
			{Name: "demo", Specifiers: Specifiers{{Op: "==", Version: "2.0"}}, Hashes: []string{"sha256:" + sha256Hex(pure)}}}}
		got, err := r.Resolve(context.Background(), in, testTarget)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].File != "demo-2.0-py3-none-any.whl" || got[0].RequiresPython != ">=3.8" {
			t.Errorf("html=%v: got %+v, want the pure wheel", html, got)
		}
	}
}

// TestResolveMarkers: a requirement whose marker excludes the target is
// not fetched.
func TestResolveMarkers(t *testing.T) {
	ix, w := demoIndex(t, false)
	six := "six-1.16.0-py2.py3-none-any.whl"
	in := readReqs(t, "six==1.16.0 --hash=sha256:"+sha256Hex(w[six])+"\ndemo==1.0 ; sys_platform == 'darwin' --hash=sha256:"+zeros+"\n")
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
	got, err := r.Resolve(context.Background(), in, testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "six" {
		t.Errorf("got %+v, want six only", got)
	}
}

func TestResolveErrors(t *testing.T) {
	ix, w := demoIndex(t, false)
	ix.add("sdistonly", fakeFile{name: "sdistonly-0.1.tar.gz", body: []byte("sdist")})
	ix.add("macos", fakeFile{name: "macos-1.0-cp311-cp311-macosx_11_0_arm64.whl", body: testWheel(t, "macos", "1.0", "cp311-cp311-macosx_11_0_arm64")})
	bad := testWheel(t, "tampered", "1.0", "py3-none-any")
	ix.add("tampered", fakeFile{name: "tampered-1.0-py3-none-any.whl", body: bad, wrongHash: true})
	ml := "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	for _, tc := range []struct {
		name, reqs string
		kind       errdefs.Kind
		is         error
		says       []string
	}{
		{"sdist only", "sdistonly==0.1 --hash=sha256:" + zeros + "\n", errdefs.NotFound, ErrSdistOnly,
			[]string{"requirements.txt:1", "sdistonly 0.1", "pip wheel --no-deps sdistonly==0.1", "find-links", "pin a version"}},
		{"no wheel for the target", "macos==1.0 --hash=sha256:" + zeros + "\n", errdefs.NotFound, ErrNoWheel,
			[]string{"macos 1.0", "macos-1.0-cp311-cp311-macosx_11_0_arm64.whl", "cp311-cp311-manylinux_2_36_x86_64"}},
		{"--hash mismatch", "demo==1.0 --hash=sha256:" + strings.Repeat("ab", 32) + "\n", errdefs.Invalid, ErrHashMismatch,
			[]string{"requirements.txt:1", ml, "sha256:" + sha256Hex(w[ml])}},
		{"index hash mismatch", "tampered==1.0 --hash=sha256:" + sha256Hex(bad) + "\n", errdefs.Invalid, ErrHashMismatch,
			[]string{"tampered-1.0-py3-none-any.whl", sha256Hex(bad)}},
		{"no such project", "nothere==1.0 --hash=sha256:" + zeros + "\n", errdefs.NotFound, nil,
			[]string{"nothere", "404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, c := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
			_, err := r.Resolve(context.Background(), readReqs(t, tc.reqs), testTarget)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.kind) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v: kind %v, want %v and %v", err, errdefs.KindOf(err), tc.kind, tc.is)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if tc.name == "index hash mismatch" {
				if _, err := os.Stat(c.BlobPath(sha256Hex(bad))); err == nil {
					t.Error("a file whose sha256 is not the index's was committed to the cache")
				}
			}
		})
	}
}

// TestResolveIndexAnswers: 429 and 403 are *LimitError naming the index
// and Retry-After; an HTML page where a project page was asked for, and
// JSON that does not parse, are ErrNotSimplePage.
func TestResolveIndexAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		kind   errdefs.Kind
		is     error
		pages  int64
		says   []string
	}{
		{"429 with a long Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}, errdefs.RateLimited, nil, 1, []string{"429 Too Many Requests", "rate-limiting", "retry after 7s (at ", "longer than the 5ms prebake may wait", "mirror"}},
		{"429", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTooManyRequests) },
			errdefs.RateLimited, nil, 2, []string{"429 Too Many Requests", "(2 attempts, no Retry-After)"}},
		{"403", func(w http.ResponseWriter) { w.WriteHeader(http.StatusForbidden) }, errdefs.Denied, nil, 1, []string{"403 Forbidden"}},
		{"login page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html><head><title>Sign in &amp; continue</title></head><body><form>password</form></body></html>"))
		}, errdefs.Invalid, ErrNotSimplePage, 1, []string{"Sign in & continue", "an HTML page"}},
		{"page of other links", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><title>Error</title><a href="/login">Log in</a> <a href="/help">help</a></html>`))
		}, errdefs.Invalid, ErrNotSimplePage, 1, []string{"no distribution files", "Error"}},
		{"bad JSON", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", mediaJSON)
			w.Write([]byte("{not json"))
		}, errdefs.Invalid, ErrNotSimplePage, 1, []string{"does not parse"}},
		{"500s", func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) }, errdefs.Unavailable, nil, 2, []string{"502"}},
		{"401", func(w http.ResponseWriter) { w.WriteHeader(http.StatusUnauthorized) }, errdefs.Denied, nil, 1, []string{"401", "pip configuration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := newFakeIndex(t, false)
			ix.page = func(w http.ResponseWriter, r *http.Request) bool { tc.answer(w); return true }
			cfg := &IndexConfig{IndexURL: strings.Replace(ix.simple(), "http://", "http://user:s3cret@", 1)}
			var notes strings.Builder
			c, err := cache.Open(t.TempDir(), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := NewClient(cfg, WithRetries(2, 5*time.Millisecond), WithLogger(logTo{&notes}))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := NewResolver(cfg, c, WithIndexClient(cl), WithUVEnv(noUV(t)))
			_, err = r.Resolve(context.Background(), readReqs(t, "demo==1.0 --hash=sha256:"+zeros+"\n"), testTarget)
			if tc.pages > 1 && !strings.Contains(notes.String(), "retrying in 5ms (attempt 2 of 2)") {
				t.Errorf("retry notes %q", notes.String())
			}
			if strings.Contains(notes.String(), "s3cret") {
				t.Errorf("retry notes %q show the password", notes.String())
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.kind) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v: kind %v, want %v and %v", err, errdefs.KindOf(err), tc.kind, tc.is)
			}
			var le *LimitError
			if strings.HasPrefix(tc.name, "4") != errors.As(err, &le) && tc.name != "401" {
				t.Errorf("error %v: *LimitError %v", err, le)
			}
			if le != nil && (le.Index != ix.simple() || tc.name == "429 with a long Retry-After" && (le.RetryAfter != 7*time.Second || !le.TooLong)) {
				t.Errorf("LimitError %+v", le)
			}
			for _, s := range append(tc.says, ix.simple()) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the index's password", err)
			}
			if n := ix.pages.Load(); n != tc.pages {
				t.Errorf("%d requests, want %d", n, tc.pages)
			}
		})
	}
}

// TestResolveFindLinks: with no index, a find-links directory's wheel is
// taken (and copied into the cache).
func TestResolveFindLinks(t *testing.T) {
	dir := t.TempDir()
	body := testWheel(t, "local-pkg", "0.3", "cp311-cp311-manylinux_2_28_x86_64")
	name := "local_pkg-0.3-cp311-cp311-manylinux_2_28_x86_64.whl"
	writeFile(t, dir, name, string(body))
	writeFile(t, dir, "local_pkg-0.3-cp310-cp310-manylinux_2_28_x86_64.whl", string(testWheel(t, "local-pkg", "0.3", "cp310-cp310-manylinux_2_28_x86_64")))
	writeFile(t, dir, "README", "not a wheel")
	r, c := newTestResolver(t, &IndexConfig{FindLinks: []string{dir}, NoIndex: true})
	got, err := r.Resolve(context.Background(), readReqs(t, hashLine("local_pkg", "0.3", body)), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	want := []Wheel{{Name: "local-pkg", Version: "0.3", File: name, URL: filepath.Join(dir, name), Sha256: sha256Hex(body),
		Size: int64(len(body)), Index: dir, Path: c.BlobPath(sha256Hex(body))}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("wheels (-want +got):\n%s", d)
	}
}

// TestResolveLock: a pylock's pin takes the lock's wheel for the target
// from the index, checked against the lock's sha256; a lock whose sha256
// is not the index's is refused; a lock's sdist-only package is refused.
func TestResolveLock(t *testing.T) {
	ix, w := demoIndex(t, false)
	ml := "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	lockOf := func(sum string) *Input {
		return &Input{Format: FormatPylock, File: "pylock.toml", Pinned: []Pin{
			{Name: "demo", Version: "1.0", Origin: Origin{"pylock.toml", 3}, Wheels: []PinnedWheel{
				{Name: ml, SHA256: sum}, {Name: "demo-1.0-py3-none-any.whl", SHA256: sha256Hex(w["demo-1.0-py3-none-any.whl"])}}},
			{Name: "six", Version: "1.16.0", Marker: mustMarker(t, "python_version < '3'"), Origin: Origin{"pylock.toml", 9}},
		}}
	}
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
	got, err := r.Resolve(context.Background(), lockOf(sha256Hex(w[ml])), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].File != ml {
		t.Errorf("got %+v, want %s only", got, ml)
	}
	_, err = r.Resolve(context.Background(), lockOf(strings.Repeat("0", 64)), testTarget)
	if !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), "pylock.toml:3") {
		t.Errorf("a lock hash that is not the index's: %v", err)
	}
	sd := &Input{Format: FormatPylock, File: "pylock.toml", Pinned: []Pin{{Name: "sdistonly", Version: "0.1", Sdist: &PinnedSdist{}, Origin: Origin{"pylock.toml", 5}}}}
	if _, err := r.Resolve(context.Background(), sd, testTarget); !errors.Is(err, ErrSdistOnly) || !strings.Contains(err.Error(), "pylock.toml:5") {
		t.Errorf("sdist-only lock package: %v", err)
	}
}

// TestResolveNeedsUV: an input that is not fully pinned needs uv, and
// with none found the error says how to get it.
func TestResolveNeedsUV(t *testing.T) {
	ix, _ := demoIndex(t, false)
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
	_, err := r.Resolve(context.Background(), readReqs(t, "demo>=1\n"), testTarget)
	if !errors.Is(err, ErrNoUV) || !errors.Is(err, errdefs.Unavailable) {
		t.Fatalf("error %v, want ErrNoUV (Unavailable)", err)
	}
	for _, s := range []string{"pip install uv==" + UVVersion, "72-uv.sh", "PREBAKE_UV", "--hash"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if ix.pages.Load() != 0 {
		t.Error("the index was asked before uv was found")
	}
}

var zeros = strings.Repeat("0", 64)

// TestResolveBounds: a page over WithMaxPage and a wheel over WithMaxWheel
// are refused, and nothing is committed to the cache.
func TestResolveBounds(t *testing.T) {
	ix, w := demoIndex(t, false)
	six := "six-1.16.0-py2.py3-none-any.whl"
	in := readReqs(t, hashLine("six", "1.16.0", w[six]))
	cfg := &IndexConfig{IndexURL: ix.simple()}
	for _, tc := range []struct {
		name string
		opt  ClientOption
		says string
	}{
		{"page", WithMaxPage(64), "over 64 bytes"},
		{"wheel", WithMaxWheel(100), "limit of 100"},
	} {
		c, err := cache.Open(t.TempDir(), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := NewClient(cfg, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewResolver(cfg, c, WithIndexClient(cl), WithUVEnv(noUV(t)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Resolve(context.Background(), in, testTarget)
		if !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want Invalid saying %q", tc.name, err, tc.says)
		}
		if _, err := os.Stat(c.BlobPath(sha256Hex(w[six]))); err == nil {
			t.Errorf("%s: the wheel was committed", tc.name)
		}
	}
}

// TestWalkUvLock: the packages a uv.lock installs on a CPython 3.11 Linux
// image: its forks' numpy for 3.11, no colorama (win32), no optional
// dependency of the project.
func TestWalkUvLock(t *testing.T) {
	in, err := ReadUvLock(context.Background(), filepath.Join("testdata", "uvproject", "uv.lock"))
	if err != nil {
		t.Fatal(err)
	}
	pins, err := walkUvLock(in, testTarget.Env())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pins {
		got = append(got, p.Name+"=="+p.Version)
	}
	slices.Sort(got)
	if d := cmp.Diff([]string{"docopt==0.6.2", "idna==3.20", "numpy==2.4.6"}, got); d != "" {
		t.Errorf("pins (-want +got):\n%s", d)
	}
	// docopt has only an sdist: the resolve says so, naming the lock.
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: "http://127.0.0.1:1/simple/"})
	if _, err := r.Resolve(context.Background(), in, testTarget); !errors.Is(err, ErrSdistOnly) || !strings.Contains(err.Error(), "uv.lock") {
		t.Errorf("error %v, want ErrSdistOnly naming uv.lock", err)
	}
}

// TestResolveCredentials: the index's userinfo is sent to it (pages and
// files of its origin) and appears in no result and no cache index line.
func TestResolveCredentials(t *testing.T) {
	ix, w := demoIndex(t, false)
	ix.user, ix.pass = "team", "s3cret"
	six := "six-1.16.0-py2.py3-none-any.whl"
	cfg := &IndexConfig{IndexURL: strings.Replace(ix.simple(), "http://", "http://team:s3cret@", 1)}
	r, c := newTestResolver(t, cfg)
	got, err := r.Resolve(context.Background(), readReqs(t, hashLine("six", "1.16.0", w[six])), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].URL != ix.URL+"/files/"+six || got[0].Index != ix.simple() {
		t.Errorf("got %+v", got)
	}
	data, err := os.ReadFile(c.IndexPath(got[0].URL))
	if err != nil || strings.Contains(string(data), "s3cret") {
		t.Errorf("cache index line %q, %v", data, err)
	}
	if !strings.Contains(cfg.String(), ix.simple()) || strings.Contains(cfg.String(), "s3cret") {
		t.Errorf("config %q", cfg)
	}
}

// TestParsePageHostile: links an index cannot serve as files (other
// schemes, path tricks) are dropped from an HTML page, refused in JSON.
func TestParsePageHostile(t *testing.T) {
	page, _ := url.Parse("https://ix.example/simple/demo/")
	body := `<a href="file:///etc/passwd">demo-1.0-py3-none-any.whl</a>
<a href="javascript:alert(1)">x.whl</a>
<a href="../../files/..">..</a>
<A HREF='/files/demo-1.0-py3-none-any.whl#SHA256=ABCD' data-requires-python="&gt;=3.8" data-yanked>ok</A>`
	p, err := parsePage("https://ix.example/simple/", page, "text/html", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []IndexFile{{Filename: "demo-1.0-py3-none-any.whl", URL: "https://ix.example/files/demo-1.0-py3-none-any.whl",
		Hashes: map[string]string{"sha256": "abcd"}, RequiresPython: ">=3.8", Yanked: true, Size: -1}}
	if d := cmp.Diff(want, p.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	_, err = parsePage("https://ix.example/simple/", page, mediaJSON,
		[]byte(`{"meta":{"api-version":"1.1"},"files":[{"filename":"../x.whl","url":"/f","hashes":{}}]}`))
	if !errors.Is(err, ErrNotSimplePage) {
		t.Errorf("a JSON file named ../x.whl: %v", err)
	}
}

type logTo struct{ b *strings.Builder }

func (l logTo) Printf(format string, args ...any) { fmt.Fprintf(l.b, format+"\n", args...) }

// TestResolvePrefersPinnedHashes: an extra index serving a better-tagged
// wheel of the same version with another digest does not displace the
// pinned file of the main index.
func TestResolvePrefersPinnedHashes(t *testing.T) {
	main := newFakeIndex(t, false)
	pure := testWheel(t, "demo", "1.0", "py3-none-any")
	main.add("demo", fakeFile{name: "demo-1.0-py3-none-any.whl", body: pure})
	extra := newFakeIndex(t, true)
	extra.add("demo", fakeFile{name: "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", body: testWheel(t, "demo", "1.0", "cp311-cp311-manylinux_2_17_x86_64")})
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: main.simple(), ExtraIndexURLs: []string{extra.simple()}})
	got, err := r.Resolve(context.Background(), readReqs(t, hashLine("demo", "1.0", pure)), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].File != "demo-1.0-py3-none-any.whl" || got[0].Index != main.simple() || extra.downloads.Load() != 0 {
		t.Errorf("got %+v (%d downloads from the extra index)", got, extra.downloads.Load())
	}
}

func TestTargetEnv(t *testing.T) {
	env := Target{Target: wheel.Target{PythonVersion: "3.12", Platform: "arm64", Glibc: "2.36"}}.Env()
	want := LinuxEnv("3.12.0", "aarch64")
	if d := cmp.Diff(want, env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	if ok, err := mustMarker(t, `python_full_version >= "3.12" and platform_machine == "aarch64"`).Evaluate(env, ""); !ok || err != nil {
		t.Errorf("marker: %v, %v", ok, err)
	}
}

// TestResolveFindLinksPage: a find-links http page of links is a source
// as a directory is.
func TestResolveFindLinksPage(t *testing.T) {
	ix, w := demoIndex(t, true)
	six := "six-1.16.0-py2.py3-none-any.whl"
	r, _ := newTestResolver(t, &IndexConfig{FindLinks: []string{ix.URL + "/simple/six/"}, NoIndex: true})
	got, err := r.Resolve(context.Background(), readReqs(t, hashLine("six", "1.16.0", w[six])), testTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].URL != ix.URL+"/files/"+six || got[0].Index != ix.URL+"/simple/six/" {
		t.Errorf("got %+v", got)
	}
}
