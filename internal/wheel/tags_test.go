package wheel

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// goldenTargets are the targets of testdata/tags (see testdata/gentags.py).
var goldenTargets = map[string]Target{
	"cp311-x86_64-glibc2.36":  {PythonVersion: "3.11", Platform: "x86_64", Glibc: "2.36"},
	"cp310-aarch64-glibc2.28": {PythonVersion: "3.10", Platform: "arm64", Glibc: "2.28"},
	"cp37-x86_64-glibc2.17":   {PythonVersion: "3.7", Platform: "amd64", Glibc: "2.17"},
	"cp312-x86_64-musl1.2":    {PythonVersion: "3.12", Platform: "x86_64", Musl: "1.2"},
	"cp39-ppc64le-none":       {PythonVersion: "3.9", Implementation: "cp", ABI: "cp39", Platform: "ppc64le", Glibc: "0"},
	"pp310-x86_64-glibc2.28":  {PythonVersion: "3.10", Implementation: "pp", ABI: "pypy310_pp73", Platform: "x86_64", Glibc: "2.28"},
}

func tagStrings(tags []Tag) []string {
	s := make([]string, len(tags))
	for i, t := range tags {
		s[i] = t.String()
	}
	return s
}

func TestTagsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/tags/*.txt")
	if len(files) != len(goldenTargets) {
		t.Fatalf("%d golden files, %d targets", len(files), len(goldenTargets))
	}
	for name, target := range goldenTargets {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/tags", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			tags, err := target.Tags()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.Fields(string(data)), tagStrings(tags)); diff != "" {
				t.Errorf("Tags() (-pip +got):\n%s", diff)
			}
		})
	}
}

// TestTagsLivePip compares Tags with the running pip's own list on this
// machine, when python3 and pip are here.
func TestTagsLivePip(t *testing.T) {
	out, err := exec.Command("python3", "-c", `import platform, sys
from pip._internal.utils.compatibility_tags import get_supported
lib, ver = platform.libc_ver()
print(sys.implementation.name, "%d.%d" % sys.version_info[:2], platform.machine(), ver if lib == "glibc" else "0")
for t in get_supported(): print(t)`).Output()
	if err != nil {
		t.Skipf("no python3 with pip: %v", err)
	}
	lines := strings.Fields(string(out))
	if lines[0] != "cpython" || strings.Contains(lines[4], "t-") {
		t.Skipf("not a plain CPython: %s %s", lines[0], lines[4])
	}
	target := Target{PythonVersion: lines[1], Platform: lines[2], Glibc: lines[3]}
	tags, err := target.Tags()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lines[4:], tagStrings(tags)); diff != "" {
		t.Errorf("Tags() of %+v (-pip +got):\n%s", target, diff)
	}
}

func TestTargetInvalid(t *testing.T) {
	for _, target := range []Target{
		{PythonVersion: "3", Platform: "x86_64"},
		{PythonVersion: "three.eleven", Platform: "x86_64"},
		{PythonVersion: "3.11", Platform: ""},
		{PythonVersion: "3.11", Platform: "x86/64"},
		{PythonVersion: "3.11", Platform: "x86_64", Glibc: "2"},
		{PythonVersion: "3.11", Platform: "x86_64", Glibc: "2.36", Musl: "1.2"},
		{PythonVersion: "3.11", Platform: "x86_64", ABI: "cp311-x"},
		{PythonVersion: "3.11", Platform: "x86_64", Implementation: "c-p"},
	} {
		if _, err := target.Tags(); !errors.Is(err, errdefs.BadArgument) || errdefs.OptionOf(err) == "" {
			t.Errorf("%+v: Tags() = %v, want a bad Target option", target, err)
		}
		if _, ok := target.Compatible(Name{Tags: []Tag{{"py3", "none", "any"}}}); ok {
			t.Errorf("%+v: Compatible = true", target)
		}
	}
}

func TestTagsFreeThreadedNoAbi3(t *testing.T) {
	tags, err := Target{PythonVersion: "3.13", ABI: "cp313t", Platform: "x86_64", Glibc: "2.28"}.Tags()
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		if tag.ABI == "abi3" {
			t.Fatalf("%v for a free-threaded target", tag)
		}
	}
	if tags[0].String() != "cp313-cp313t-manylinux_2_28_x86_64" {
		t.Errorf("first tag %v", tags[0])
	}
}

var (
	x86   = Target{PythonVersion: "3.11", Platform: "x86_64", Glibc: "2.36"}
	arm   = Target{PythonVersion: "3.11", Platform: "aarch64", Glibc: "2.36"}
	el7   = Target{PythonVersion: "3.11", Platform: "x86_64", Glibc: "2.17"}
	musl  = Target{PythonVersion: "3.11", Platform: "x86_64", Musl: "1.2"}
	py312 = Target{PythonVersion: "3.12", Platform: "x86_64", Glibc: "2.36"}
)

func TestCompatible(t *testing.T) {
	for _, tc := range []struct {
		file   string
		target Target
		ok     bool
	}{
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", x86, true},
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", el7, true},
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", arm, false},
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", py312, false},
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", musl, false},
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", arm, true},
		{"numpy-1.26.4-cp311-cp311-musllinux_1_1_x86_64.whl", musl, true},
		{"numpy-1.26.4-cp311-cp311-musllinux_1_1_x86_64.whl", x86, false},
		{"numpy-1.26.4-cp311-cp311-win_amd64.whl", x86, false},
		{"numpy-1.26.4-cp311-cp311-macosx_11_0_arm64.whl", arm, false},
		{"pyarrow-15.0.0-cp311-cp311-manylinux_2_28_x86_64.whl", x86, true},
		{"pyarrow-15.0.0-cp311-cp311-manylinux_2_28_x86_64.whl", el7, false},
		{"pyarrow-15.0.0-cp311-cp311-manylinux_2_28_aarch64.whl", arm, true},
		{"pandas-2.2.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", x86, true},
		{"pandas-2.2.2-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", x86, false},
		{"cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl", x86, true},
		{"cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl", py312, true},
		{"cryptography-42.0.5-cp37-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", el7, true},
		{"cryptography-42.0.5-cp39-abi3-musllinux_1_2_aarch64.whl", musl, false},
		{"cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl", Target{PythonVersion: "3.8", Platform: "x86_64", Glibc: "2.36"}, false},
		{"psycopg2_binary-2.9.9-cp311-cp311-manylinux_2_5_x86_64.manylinux1_x86_64.whl", el7, true},
		{"six-1.16.0-py2.py3-none-any.whl", x86, true},
		{"py4j-0.10.9.7-py2.py3-none-any.whl", musl, true},
		{"typing_extensions-4.12.2-py3-none-any.whl", arm, true},
		{"old-1.0-py2-none-any.whl", x86, false},
		{"local-1.0-cp311-cp311-linux_x86_64.whl", x86, true},
		{"pypy_only-1.0-pp310-pypy310_pp73-manylinux_2_17_x86_64.whl", x86, false},
	} {
		n, err := ParseFilename(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tc.target.Compatible(n); ok != tc.ok {
			t.Errorf("%+v.Compatible(%s) = %v, want %v", tc.target, tc.file, ok, tc.ok)
		}
	}
}

func TestBest(t *testing.T) {
	for _, tc := range []struct {
		target Target
		files  []string
		want   string // "" = none
	}{
		{x86, []string{
			"pyarrow-15.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
			"pyarrow-15.0.0-cp311-cp311-manylinux_2_28_x86_64.whl",
			"pyarrow-15.0.0-cp311-cp311-manylinux_2_28_aarch64.whl",
		}, "pyarrow-15.0.0-cp311-cp311-manylinux_2_28_x86_64.whl"},
		{el7, []string{
			"pyarrow-15.0.0-cp311-cp311-manylinux_2_28_x86_64.whl",
			"pyarrow-15.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
		}, "pyarrow-15.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"},
		{x86, []string{
			"cryptography-42.0.5-cp37-abi3-manylinux_2_28_x86_64.whl",
			"cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl",
			"cryptography-42.0.5-cp39-abi3-musllinux_1_2_x86_64.whl",
		}, "cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl"},
		{x86, []string{ // a binary wheel before a pure one
			"markupsafe-2.1.5-py3-none-any.whl",
			"markupsafe-2.1.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
		}, "markupsafe-2.1.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"},
		{x86, []string{ // the build tag breaks a tie
			"demo-1.0-2-py3-none-any.whl",
			"demo-1.0-10-py3-none-any.whl",
			"demo-1.0-py3-none-any.whl",
		}, "demo-1.0-10-py3-none-any.whl"},
		{arm, []string{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"}, ""},
	} {
		var names []Name
		for _, f := range tc.files {
			n, err := ParseFilename(f)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		got := ""
		if i, ok := tc.target.Best(names); ok {
			got = names[i].File
		}
		if got != tc.want {
			t.Errorf("Best(%v) = %q, want %q", tc.files, got, tc.want)
		}
	}
}
