package pypi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/errdefs"
)

// cmpMarkers compares markers by their normal form.
var cmpMarkers = cmp.Comparer(func(a, b Marker) bool { return a.String() == b.String() })

func mustMarker(t *testing.T, s string) Marker {
	t.Helper()
	m, err := ParseMarker(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustSpecs(t *testing.T, s string) Specifiers {
	t.Helper()
	ss, err := ParseSpecifiers(s)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func withEnv(vars map[string]string) ReadOption {
	return WithGetenv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
}

func TestReadRequirements(t *testing.T) {
	dir := filepath.Join("testdata", "requirements")
	top := filepath.Join(dir, "requirements.txt")
	src := func(file string, line int) Origin { return Origin{File: file, Line: line} }
	base, common := filepath.Join(dir, "sub", "base.txt"), filepath.Join(dir, "sub", "common.txt")
	cons := filepath.Join(dir, "constraints.txt")
	want := &Input{
		Format: FormatRequirements,
		File:   top,
		Requirements: []Requirement{
			{Name: "python-dateutil", Specifiers: mustSpecs(t, ">=2.8.2"), Origin: src(common, 1)},
			{Name: "six", Specifiers: mustSpecs(t, ">=1.16"), Origin: src(base, 3)},
			{Name: "pandas", Extras: []string{"excel", "performance"}, Specifiers: mustSpecs(t, ">=2.1,<3"),
				Marker: mustMarker(t, `python_version >= "3.9"`), Origin: src(top, 7)},
			{Name: "numpy", Specifiers: mustSpecs(t, "~= 1.26.0"), Origin: src(top, 8)},
			{Name: "requests", Extras: []string{"socks"}, Specifiers: mustSpecs(t, ">=2.31, !=2.32.0"), Origin: src(top, 9)},
			{Name: "colorama", Marker: mustMarker(t, `sys_platform == "win32"`), Origin: src(top, 10)},
			{Name: "typing-extensions", Specifiers: mustSpecs(t, "==4.12.2"), Hashes: []string{
				"sha256:04e5ca0351e0f3f85c6853954072df659d0d13fac324d0072316b67d7794700d",
				"sha256:1a7ead55c7e559dd4dee8856e3a88b41225abfe1ce8df57b7c13915fe121ffb8",
			}, Origin: src(top, 11)},
			{Name: "pyarrow", Specifiers: mustSpecs(t, "==17.0.0"), Origin: src(top, 14)},
		},
		Constraints: []Requirement{
			{Name: "numpy", Specifiers: mustSpecs(t, "<2"), Origin: src(cons, 1)},
			{Name: "urllib3", Specifiers: mustSpecs(t, "==2.2.3"), Origin: src(cons, 2)},
		},
		Indexes: []IndexLine{
			{Flag: "--index-url", URL: "https://mirror.example.com/simple", Origin: src(top, 2)},
			{Flag: "--extra-index-url", URL: "https://pypi.example.org/simple", Origin: src(top, 3)},
		},
	}
	got, err := ReadRequirements(context.Background(), top, withEnv(map[string]string{"PYARROW_VERSION": "17.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpMarkers); diff != "" {
		t.Errorf("ReadRequirements (-want +got):\n%s", diff)
	}
	if got.FullyPinned() {
		t.Error("FullyPinned: true, want false")
	}
	if s := fmt.Sprintf("%+v", got); strings.Contains(s, "s3cret") || strings.Contains(s, "user:") {
		t.Errorf("the input keeps the index's userinfo: %s", s)
	}
}

func TestReadRequirementsHashed(t *testing.T) {
	top := filepath.Join("testdata", "requirements", "hashed.txt")
	got, err := Read(context.Background(), top)
	if err != nil {
		t.Fatal(err)
	}
	want := &Input{Format: FormatRequirements, File: top, RequireHashes: true, Requirements: []Requirement{
		{Name: "six", Specifiers: mustSpecs(t, "==1.17.0"), Hashes: []string{"sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"}, Origin: Origin{top, 3}},
		{Name: "idna", Specifiers: mustSpecs(t, "==3.20"), Hashes: []string{"sha256:ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c"}, Origin: Origin{top, 4}},
	}}
	if diff := cmp.Diff(want, got, cmpMarkers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !got.FullyPinned() {
		t.Error("FullyPinned: false, want true")
	}
}

func TestFullyPinnedRequirements(t *testing.T) {
	const h = " --hash=sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"six==1.17.0" + h + "\n", true},
		{"six==1.17.0" + h + "\nidna==3.20\n", false},
		{"six>=1.17.0" + h + "\n", false},
		{"six==1.*" + h + "\n", false},
		{"six==1.17.0\n", false},
		{"# nothing\n", false},
	} {
		f := filepath.Join(t.TempDir(), "requirements.txt")
		if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := ReadRequirements(context.Background(), f)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if got := in.FullyPinned(); got != tc.want {
			t.Errorf("%q: FullyPinned = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestReadRequirementsCycle(t *testing.T) {
	dir := filepath.Join("testdata", "requirements")
	for _, tc := range []struct{ file, msg string }{
		{"self.txt", "testdata/requirements/self.txt:1: testdata/requirements/self.txt includes itself (testdata/requirements/self.txt → testdata/requirements/self.txt)"},
		{"cycle-a.txt", "testdata/requirements/cycle-b.txt:2: testdata/requirements/cycle-a.txt includes itself (testdata/requirements/cycle-a.txt → testdata/requirements/cycle-b.txt → testdata/requirements/cycle-a.txt)"},
	} {
		_, err := ReadRequirements(context.Background(), filepath.Join(dir, tc.file))
		checkInputErr(t, err, errdefs.Invalid, tc.msg)
	}
}

// checkInputErr checks err's kind, its message and that it is a *LineError
// (every error names its file and line).
func checkInputErr(t *testing.T, err error, kind errdefs.Kind, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", msg)
	}
	if got := errdefs.KindOf(err); got != kind {
		t.Errorf("%v: kind %v, want %v", err, got, kind)
	}
	if diff := cmp.Diff(msg, err.Error()); diff != "" {
		t.Errorf("message %q (-want +got):\n%s", err.Error(), diff)
	}
	var le *LineError
	if kind == errdefs.Invalid && !errors.As(err, &le) {
		t.Errorf("%v: not a *LineError", err)
	}
	if strings.Contains(msg, "not lockable as wheels") && !errors.Is(err, ErrNotWheel) {
		t.Errorf("%v: not ErrNotWheel", err)
	}
}

func TestReadRequirementsErrors(t *testing.T) {
	const h = "sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"
	for _, tc := range []struct {
		name, text, msg string
		kind            errdefs.Kind
	}{
		{"editable", "six\n-e git+https://github.com/u/p.git#egg=p\n", `F:2: an editable requirement (-e git+https://github.com/u/p.git#egg=p) is not lockable as wheels`, 0},
		{"editable userinfo", "-e git+https://tok:x-oauth@github.com/u/p.git\n", `F:1: an editable requirement (-e git+https://github.com/u/p.git) is not lockable as wheels`, 0},
		{"vcs", "git+https://github.com/u/p.git@v1#egg=p\n", `F:1: "git+https://github.com/u/p.git@v1#egg=p" is a URL, path or VCS requirement: not lockable as wheels (name the project and its version from an index)`, 0},
		{"url", "https://files.example.com/p-1.0-py3-none-any.whl\n", `F:1: "https://files.example.com/p-1.0-py3-none-any.whl" is a URL, path or VCS requirement: not lockable as wheels (name the project and its version from an index)`, 0},
		{"path", "./vendor/p\n", `F:1: "./vendor/p" is a URL, path or VCS requirement: not lockable as wheels (name the project and its version from an index)`, 0},
		{"wheel file", "p-1.0-py3-none-any.whl\n", `F:1: "p-1.0-py3-none-any.whl" is a URL, path or VCS requirement: not lockable as wheels (name the project and its version from an index)`, 0},
		{"name at url", "p @ https://example.com/p.whl\n", `F:1: p is a URL requirement (name @ URL): not lockable as wheels`, 0},
		{"bad specifier", "six\nidna=>3\n", `F:2: idna: "=>3": no operator: not a PEP 440 version specifier`, 0},
		{"bad version", "idna==3.x\n", `F:1: idna: "==3.x": not a PEP 440 version specifier: "3.x": not a PEP 440 version`, 0},
		{"bad marker", "idna; os_name === \n", `F:1: idna: " os_name ===": a value expected at the end: bad environment marker`, 0},
		{"unset variable", "py4j==${PY4J_VERSION}\n", `F:1: py4j: "==${PY4J_VERSION}": not a PEP 440 version specifier: "${PY4J_VERSION}": not a PEP 440 version`, 0},
		{"bad hash", "six==1.0 --hash=md5:abcd\n", `F:1: --hash "md5:abcd": want sha256:<hex> (or sha384, sha512)`, 0},
		{"short hash", "six==1.0 --hash=sha256:abcd\n", `F:1: --hash "sha256:abcd": not 64 hex digits`, 0},
		{"hash alone", "--hash=" + h + "\n", `F:1: --hash with no requirement before it`, 0},
		{"unknown option", "--frobnicate\n", `F:1: option --frobnicate is not supported in a requirements file`, 0},
		{"option value missing", "-r\n", `F:1: option -r needs a value`, 0},
		{"requirement option", "six --global-option=x\n", `F:1: option --global-option is not supported on a requirement line (only --hash)`, 0},
		{"no binary", "--no-binary :all:\n", `F:1: --no-binary :all: asks for source builds: prebake locks wheels only`, 0},
		{"include by url", "-r https://u:p@example.com/r.txt\n", `F:1: -r https://example.com/r.txt: files are included from the file system only`, 0},
		{"missing include", "\n-r nothing.txt\n", `F:2: D/nothing.txt does not exist: file does not exist`, errdefs.NotFound},
		{"constraint extras", "-c c.txt\n", `D/c.txt:1: six: a constraint cannot have extras`, 0},
		{"nul", "six\nid\x00na\n", `F:2: a NUL byte at offset 6`, 0},
		{"not utf-8", "six\n\nid\xffna\n", `F:3: not valid UTF-8`, 0},
		{"unclosed quote", `six --hash "sha256:ab` + "\n", `F:1: an unclosed quote (")`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "requirements.txt")
			if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "c.txt"), []byte("six[socks]<2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadRequirements(context.Background(), f, withEnv(nil))
			kind := tc.kind
			if kind == 0 {
				kind = errdefs.Invalid
			}
			msg := strings.ReplaceAll(strings.ReplaceAll(tc.msg, "F:", f+":"), "D/", dir+"/")
			checkInputErr(t, err, kind, msg)
		})
	}
}

func TestReadRequirementsContinuations(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "r.txt")
	text := "# a comment ending in a backslash \\\nsix\\\n>=1.0\n  # indented comment\nidna \\\n  # a comment ends it\n\\\nnumpy\n"
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequirements(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Requirement{
		{Name: "six", Specifiers: mustSpecs(t, ">=1.0"), Origin: Origin{f, 2}},
		{Name: "idna", Origin: Origin{f, 5}},
		{Name: "numpy", Origin: Origin{f, 7}},
	}
	if diff := cmp.Diff(want, got.Requirements, cmpMarkers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadRequirementsHostile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.txt")
	if err := os.WriteFile(huge, []byte(strings.Repeat("six\n", MaxFileSize/4+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	includesFifo := filepath.Join(dir, "inc.txt")
	if err := os.WriteFile(includesFifo, []byte("six\n-r fifo.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A chain one longer than the limit: deep0 → deep1 → … → deepN.
	for i := range MaxIncludeDepth + 1 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("deep%d.txt", i)), fmt.Appendf(nil, "-r deep%d.txt\n", i+1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path, msg string
		kind            errdefs.Kind
	}{
		{"fifo", fifo, fifo + " is a named pipe (FIFO), not a regular file", errdefs.Invalid},
		{"fifo included", includesFifo, includesFifo + ":2: " + fifo + " is a named pipe (FIFO), not a regular file", errdefs.Invalid},
		{"device", "/dev/zero", "/dev/zero is a character device, not a regular file", errdefs.Invalid},
		{"directory", dir, dir + " is a directory, not a regular file", errdefs.Invalid},
		{"huge", huge, fmt.Sprintf("%s: larger than the limit of %d bytes", huge, MaxFileSize), errdefs.Invalid},
		{"deep", filepath.Join(dir, "deep0.txt"), fmt.Sprintf("%s/deep%d.txt:1: -r/-c includes nested deeper than %d", dir, MaxIncludeDepth-1, MaxIncludeDepth), errdefs.Invalid},
		{"missing", filepath.Join(dir, "nothing.txt"), filepath.Join(dir, "nothing.txt") + " does not exist: file does not exist", errdefs.NotFound},
		{"no file", "", "no file named", errdefs.BadArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := ReadRequirements(context.Background(), tc.path)
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := errdefs.KindOf(err); got != tc.kind {
				t.Errorf("%v: kind %v, want %v", err, got, tc.kind)
			}
			if diff := cmp.Diff(tc.msg, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadRequirementsManyFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leaf.txt"), []byte("six\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not a cycle: the same file included again and again (pip reads it
	// each time), until MaxFiles.
	top := filepath.Join(dir, "top.txt")
	if err := os.WriteFile(top, []byte(strings.Repeat("-r leaf.txt\n", MaxFiles)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadRequirements(context.Background(), top)
	checkInputErr(t, err, errdefs.Invalid, fmt.Sprintf("%s:%d: more than %d files included", top, MaxFiles, MaxFiles))
	if err := os.WriteFile(top, []byte("-r leaf.txt\n-r leaf.txt\n--index-url https://u:p/w@h/simple\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ReadRequirements(context.Background(), top)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Requirements) != 2 {
		t.Errorf("%d requirements, want 2 (a file included twice is read twice)", len(in.Requirements))
	}
	if diff := cmp.Diff("https://h/simple", in.Indexes[0].URL); diff != "" {
		t.Errorf("an unparsable index URL keeps its userinfo (-want +got):\n%s", diff)
	}
}

func TestReadRequirementsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadRequirements(ctx, filepath.Join("testdata", "requirements", "requirements.txt")); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestParseRequirement(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"Django", "django"},
		{"zope.interface>=5", "zope-interface>=5"},
		{"A[B_c , d]  (==1.0) ;python_version<'3'", `a[b-c,d]==1.0; python_version < "3"`},
		{"requests[]", "requests"},
		{"name>=1,<2; os_name=='nt' or extra == 'x'", `name>=1,<2; os_name == "nt" or extra == "x"`},
	} {
		r, err := ParseRequirement(tc.in)
		if err != nil {
			t.Errorf("ParseRequirement(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, r.String()); diff != "" {
			t.Errorf("ParseRequirement(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, in := range []string{"", "-foo", "foo-", "foo[bar", "foo[b@r]", "foo (>=1", "foo;", "foo bar"} {
		if _, err := ParseRequirement(in); err == nil {
			t.Errorf("ParseRequirement(%q): no error", in)
		}
	}
}
