package pypi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/errdefs"
)

func TestReadPyproject(t *testing.T) {
	path := filepath.Join("testdata", "pyproject.toml")
	src := func(line int) Origin { return Origin{path, line} }
	base := []Requirement{
		{Name: "pyspark", Extras: []string{"connect"}, Specifiers: mustSpecs(t, "==3.5.3"), Origin: src(10)},
		{Name: "numpy", Specifiers: mustSpecs(t, ">=1.26,<3"), Origin: src(11)},
		{Name: "pandas", Specifiers: mustSpecs(t, ">=2.1"), Marker: mustMarker(t, `python_version >= "3.10"`), Origin: src(12)},
	}
	for _, tc := range []struct {
		name   string
		extras []string
		want   []Requirement
	}{
		{"no extras", nil, base},
		{"extra", []string{"Arrow"}, append(base[:3:3], Requirement{Name: "pyarrow", Specifiers: mustSpecs(t, ">=15"), Origin: src(16)})},
		// ml asks for the project's own arrow extra.
		{"self extra", []string{"ml"}, append(base[:3:3],
			Requirement{Name: "scikit-learn", Specifiers: mustSpecs(t, "~=1.5"), Origin: src(18)},
			Requirement{Name: "pyarrow", Specifiers: mustSpecs(t, ">=15"), Origin: src(16)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(context.Background(), path, WithExtras(tc.extras...))
			if err != nil {
				t.Fatal(err)
			}
			want := &Input{Format: FormatPyproject, File: path, Requirements: tc.want, RequiresPython: mustSpecs(t, ">=3.10")}
			if diff := cmp.Diff(want, got, cmpMarkers); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.FullyPinned() {
				t.Error("FullyPinned: true")
			}
		})
	}
	_, err := ReadPyproject(context.Background(), path, WithExtras("gpu"))
	if errdefs.KindOf(err) != errdefs.BadArgument || errdefs.OptionOf(err) != "pypi.WithExtras" {
		t.Errorf("unknown extra: %v (kind %v, option %q), want a BadArgument of pypi.WithExtras", err, errdefs.KindOf(err), errdefs.OptionOf(err))
	}
	if diff := cmp.Diff(`testdata/pyproject.toml declares no extra "gpu" (it declares: arrow, dev, ml)`, err.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadPyprojectErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, msg string
		extras          []string
	}{
		{"dynamic", "[project]\nname = 'x'\nversion = '1'\ndynamic = ['version', 'dependencies']\n",
			"F:4: [project] dependencies are dynamic (computed by the build backend): list them in the file, or use a requirements file or a lock", nil},
		{"dynamic optional", "[project]\nname = 'x'\ndynamic = ['optional-dependencies']\ndependencies = []\n",
			"F:3: [project] optional-dependencies are dynamic (computed by the build backend): extras a cannot be read", []string{"a"}},
		{"no project", "[tool.poetry]\nname = 'x'\n", "F: no [project] table (PEP 621)", nil},
		{"bad toml", "[project]\nname = 'x'\ndependencies = [\n  'six',\n  oops\n]\n", `F:5: not valid TOML: expected value but found "oops" instead`, nil},
		{"bad requirement", "[project]\nname = 'x'\ndependencies = [\n  'six',\n  'idna >> 3',\n]\n", `F:5: idna: ">> 3": not a PEP 440 version specifier`, nil},
		{"url requirement", "[project]\nname = 'x'\ndependencies = [\"p @ https://example.com/p-1.0.tar.gz\"]\n", `F:3: p is a URL requirement (name @ URL): not lockable as wheels`, nil},
		{"self extra missing", "[project]\nname = 'x'\ndependencies = []\n[project.optional-dependencies]\na = ['x[b]']\n", `F:3: x[b]: the project declares no extra "b"`, []string{"a"}},
		{"nul", "[project]\nname = 'x\x00'\n", "F:2: a NUL byte at offset 19", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "pyproject.toml")
			if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadPyproject(context.Background(), f, WithExtras(tc.extras...))
			checkInputErr(t, err, errdefs.Invalid, strings.ReplaceAll(tc.msg, "F", f))
		})
	}
}

func TestReadFormatByName(t *testing.T) {
	dir := t.TempDir()
	lock := "lock-version = '1.0'\n"
	for _, tc := range []struct {
		name, text string
		want       Format
	}{
		{"pylock.spark.toml", lock, FormatPylock},
		{"pylock.toml", lock, FormatPylock},
		{"uv.lock", "version = 1\n", FormatUvLock},
		{"pyproject.toml", "[project]\nname = 'x'\n", FormatPyproject},
		{"requirements-prod.in", "six\n", FormatRequirements},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := Read(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if in.Format != tc.want {
			t.Errorf("%s: format %q, want %q", tc.name, in.Format, tc.want)
		}
	}
}
