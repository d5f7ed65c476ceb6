package pypi

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/errdefs"
)

var updateInput = flag.Bool("update-input", false, "rewrite the golden files of resolver/pypi's inputs")

// inputGolden compares in, as indented JSON, with the golden file name.
func inputGolden(t *testing.T, name string, in *Input) {
	t.Helper()
	got, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateInput {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestReadPylockPEP751(t *testing.T) {
	path := filepath.Join("testdata", "pylock.toml")
	got, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	src := func(line int) Origin { return Origin{path, line} }
	want := &Input{Format: FormatPylock, File: path, RequiresPython: mustSpecs(t, "==3.12"), Pinned: []Pin{
		{Name: "attrs", Version: "25.1.0", RequiresPython: mustSpecs(t, ">=3.8"), Origin: src(9), Wheels: []PinnedWheel{{
			Name: "attrs-25.1.0-py3-none-any.whl",
			URL:  "https://files.pythonhosted.org/packages/fc/30/d4986a882011f9df997a55e6becd864812ccfcd821d64aac8570ee39f719/attrs-25.1.0-py3-none-any.whl",
			Size: 63152, SHA256: "c75a69e28a550a7e93789579c22aa26b0f5b83b75dc4e08fe092980051e1090a",
		}}},
		{Name: "cattrs", Version: "24.1.2", RequiresPython: mustSpecs(t, ">=3.8"), Index: "https://pypi.org/simple", Origin: src(27), Wheels: []PinnedWheel{{
			Name: "cattrs-24.1.2-py3-none-any.whl",
			URL:  "https://files.pythonhosted.org/packages/c8/d5/867e75361fc45f6de75fe277dd085627a9db5ebb511a87f27dc1396b5351/cattrs-24.1.2-py3-none-any.whl",
			Size: 66446, SHA256: "67c7495b760168d931a10233f979b28dc04daf853b30752246f4f8471c6d68d0",
		}}},
		{Name: "numpy", Version: "2.2.3", RequiresPython: mustSpecs(t, ">=3.10"), Origin: src(43), Wheels: []PinnedWheel{{
			Name: "numpy-2.2.3-cp312-cp312-win_amd64.whl",
			URL:  "https://files.pythonhosted.org/packages/42/6e/55580a538116d16ae7c9aa17d4edd56e83f42126cb1dfe7a684da7925d2c/numpy-2.2.3-cp312-cp312-win_amd64.whl",
			Size: 12626357, SHA256: "83807d445817326b4bcdaaaf8e8e9f1753da04341eceec705c001ff342002e5d",
		}, {
			Name: "numpy-2.2.3-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
			URL:  "https://files.pythonhosted.org/packages/39/04/78d2e7402fb479d893953fb78fa7045f7deb635ec095b6b4f0260223091a/numpy-2.2.3-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
			Size: 16116679, SHA256: "3b787adbf04b0db1967798dba8da1af07e387908ed1553a0d6e74c084d1ceafe",
		}}},
		{Name: "colorama", Version: "0.4.6", Marker: mustMarker(t, `sys_platform == "win32"`), Index: "https://pypi.example.com/simple", Origin: src(52), Wheels: []PinnedWheel{{
			Name: "colorama-0.4.6-py2.py3-none-any.whl",
			URL:  "https://files.pythonhosted.org/packages/d1/d6/3965ed04c63042e047cb6a3e6ed1a63a35087b6a609aa3a15ed8ac56c221/colorama-0.4.6-py2.py3-none-any.whl",
			Size: 25335, SHA256: "4f1d9991f5acc0ca119f9d443620b77f9d6b33703e51011c16baf57afb285fc6",
		}}},
		{Name: "docopt", Version: "0.6.2", Index: "https://pypi.org/simple", Origin: src(63), Sdist: &PinnedSdist{
			URL:  "https://files.pythonhosted.org/packages/a2/55/8f8cab2afd404cf578136ef2cc5dfb50baa1761b68c9da1fb1e4eed343c9/docopt-0.6.2.tar.gz",
			Size: 25901, SHA256: "49b3a825280bd66b3aa83585ef59c4a8c82f2c8a522dbe754a8bc8d08c85c491",
		}},
	}}
	if diff := cmp.Diff(want, got, cmpMarkers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !got.FullyPinned() {
		t.Error("FullyPinned: false")
	}
	if sdist := got.Pinned[4]; !sdist.SdistOnly() || got.Pinned[0].SdistOnly() {
		t.Error("SdistOnly: docopt has no wheel, attrs has one")
	}
}

// The uv project's pylock.toml and uv.lock were written by uv 0.13.9
// (uv export --format pylock.toml --all-extras; uv lock) for
// testdata/uvproject/pyproject.toml against PyPI.
func TestReadUvExports(t *testing.T) {
	for _, name := range []string{"pylock.toml", "uv.lock"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "uvproject", name)
			in, err := Read(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			inputGolden(t, path+".golden.json", in)
			if !in.FullyPinned() {
				t.Error("FullyPinned: false")
			}
			var sdistOnly []string
			numpy := 0
			for _, p := range in.Pinned {
				if p.SdistOnly() {
					sdistOnly = append(sdistOnly, p.Name+"=="+p.Version)
				}
				if p.Name == "numpy" {
					numpy++
				}
			}
			if diff := cmp.Diff([]string{"docopt==0.6.2"}, sdistOnly); diff != "" {
				t.Errorf("sdist-only (-want +got):\n%s", diff)
			}
			if numpy != 3 {
				t.Errorf("%d numpy versions, want 3 (one per Python range)", numpy)
			}
		})
	}
}

func TestUvLockRoots(t *testing.T) {
	in, err := ReadUvLock(context.Background(), filepath.Join("testdata", "uvproject", "uv.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, r := range in.Roots {
		s := r.Name
		if r.Version != "" {
			s += "==" + r.Version
		}
		if r.Extra != "" {
			s += " [" + r.Extra + "]"
		}
		if !r.Marker.IsZero() {
			s += "; " + r.Marker.String()
		}
		roots = append(roots, s)
	}
	want := []string{
		`colorama; sys_platform == "win32"`,
		"docopt",
		"idna",
		`numpy==2.2.6; python_full_version < "3.11"`,
		`numpy==2.4.6; python_full_version == "3.11.*"`,
		`numpy==2.5.5; python_full_version >= "3.12"`,
		"six [arrow]",
	}
	if diff := cmp.Diff(want, roots); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
	// The numpy for a Python 3.12 Spark image.
	env := LinuxEnv("3.12.4", "x86_64")
	var picked []string
	for _, r := range in.Roots {
		if ok, err := r.Marker.Evaluate(env, ""); err != nil || !ok {
			continue
		}
		if r.Name == "numpy" {
			picked = append(picked, r.Version)
		}
	}
	if diff := cmp.Diff([]string{"2.5.5"}, picked); diff != "" {
		t.Errorf("numpy for 3.12 (-want +got):\n%s", diff)
	}
}

func TestReadLockErrors(t *testing.T) {
	const wheel = `url = 'https://files.example.com/p/six-1.17.0-py2.py3-none-any.whl'`
	const h = `'4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274'`
	for _, tc := range []struct {
		name, file, text, msg string
	}{
		{"lock version", "pylock.toml", "lock-version = '2.0'\n", `F:1: lock-version "2.0": only PEP 751 lock-version 1.x is read`},
		{"vcs", "pylock.toml", "lock-version = '1.0'\n\n[[packages]]\nname = 'p'\nvcs = {type = 'git', url = 'https://u:p@example.com/p.git', commit-id = 'abc'}\n", `F:5: package p: from a VCS: not lockable as wheels`},
		{"directory", "pylock.toml", "lock-version = '1.0'\n[[packages]]\nname = 'p'\ndirectory = {path = '.'}\n", `F:4: package p: from a directory: not lockable as wheels`},
		{"wheel by path", "pylock.toml", "lock-version = '1.0'\n[[packages]]\nname = 'six'\nversion = '1.17.0'\nwheels = [{name = 'six-1.17.0-py2.py3-none-any.whl', path = 'w/six-1.17.0-py2.py3-none-any.whl', hashes = {sha256 = " + h + "}}]\n", `F:5: package six, wheel six-1.17.0-py2.py3-none-any.whl: no url (a wheel by path is not fetched from an index)`},
		{"no sha256", "pylock.toml", "lock-version = '1.0'\n[[packages]]\nname = 'six'\nversion = '1.17.0'\n\n[[packages.wheels]]\n" + wheel + "\nhashes = {sha512 = 'ab'}\n", `F:7: package six, wheel six-1.17.0-py2.py3-none-any.whl: no sha256 hash`},
		{"bad marker", "pylock.toml", "lock-version = '1.0'\n[[packages]]\nname = 'six'\nversion = '1.17.0'\nmarker = 'os_name ='\n", `F:5: package six: "os_name =": an unknown operator "=": bad environment marker`},
		{"no version", "pylock.toml", "lock-version = '1.0'\n[[packages]]\nname = 'six'\nwheels = []\n", `F:3: package six: no version`},
		{"ftp url", "pylock.toml", "lock-version = '1.0'\n[[packages]]\nname = 'six'\nversion = '1'\nwheels = [{url = 'ftp://u:pw@h/six-1-py3-none-any.whl', hashes = {sha256 = " + h + "}}]\n", `F:5: package six, wheel six-1-py3-none-any.whl: URL "ftp://h/six-1-py3-none-any.whl" is not an http(s) URL`},
		{"bad name", "pylock.toml", "lock-version = '1.0'\n# a comment\n[[packages]]\nname = '../etc'\nversion = '1'\n", `F:3: package name "../etc" is not a project name`},
		{"requires-python", "pylock.toml", "lock-version = '1.0'\nrequires-python = '>=3.x'\n", `F:2: requires-python: ">=3.x": not a PEP 440 version specifier: "3.x": not a PEP 440 version`},
		{"uv version", "uv.lock", "version = 2\n", `F:1: uv.lock version 2: only version 1 is read`},
		{"uv git", "uv.lock", "version = 1\n\n[[package]]\nname = 'p'\nversion = '1.0'\nsource = { git = 'https://tok@github.com/u/p?rev=v1#abc' }\n", `F:6: package p: from git https://github.com/u/p?rev=v1#abc: not lockable as wheels`},
		{"uv hash", "uv.lock", "version = 1\n[[package]]\nname = 'six'\nversion = '1.17.0'\nsource = { registry = 'https://pypi.org/simple' }\nwheels = [\n  { " + strings.ReplaceAll(wheel, "'", `"`) + ", hash = \"md5:00\" },\n]\n", `F:7: package six, wheel six-1.17.0-py2.py3-none-any.whl: hash "md5:00": want sha256:<hex>`},
		{"uv no files", "uv.lock", "version = 1\n[[package]]\nname = 'six'\nversion = '1.17.0'\nsource = { registry = 'https://pypi.org/simple' }\n", `F:3: package six: no wheel and no sdist`},
		{"toml type", "uv.lock", "version = 'one'\n", `F: not valid TOML: toml: line 1 (last key "version"): incompatible types: TOML value has type string; destination has type integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(context.Background(), f)
			checkInputErr(t, err, errdefs.Invalid, strings.ReplaceAll(tc.msg, "F", f))
		})
	}
}

func BenchmarkReadUvLock(b *testing.B) {
	path := filepath.Join("testdata", "uvproject", "uv.lock")
	for b.Loop() {
		if _, err := ReadUvLock(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadRequirements(b *testing.B) {
	path := filepath.Join("testdata", "requirements", "requirements.txt")
	for b.Loop() {
		if _, err := ReadRequirements(context.Background(), path, withEnv(map[string]string{"PYARROW_VERSION": "17.0.0"})); err != nil {
			b.Fatal(err)
		}
	}
}
