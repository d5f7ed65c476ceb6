package wheel

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

func TestParseFilename(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Name
	}{
		{"six-1.16.0-py2.py3-none-any.whl", Name{Distribution: "six", Version: "1.16.0",
			Tags: []Tag{{"py2", "none", "any"}, {"py3", "none", "any"}}}},
		{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", Name{Distribution: "numpy", Version: "1.26.4",
			Tags: []Tag{{"cp311", "cp311", "manylinux_2_17_x86_64"}, {"cp311", "cp311", "manylinux2014_x86_64"}}}},
		{"typing_extensions-4.12.2-py3-none-any.whl", Name{Distribution: "typing_extensions", Version: "4.12.2",
			Tags: []Tag{{"py3", "none", "any"}}}},
		{"zope.interface-6.2-cp311-cp311-manylinux_2_28_aarch64.whl", Name{Distribution: "zope.interface", Version: "6.2",
			Tags: []Tag{{"cp311", "cp311", "manylinux_2_28_aarch64"}}}},
		{"torch-2.3.0+cpu-1-CP311-cp311-Linux_X86_64.whl", Name{Distribution: "torch", Version: "2.3.0+cpu", Build: "1",
			Tags: []Tag{{"cp311", "cp311", "linux_x86_64"}}}},
		{"demo-1!2.0rc1-py3-none-any.whl", Name{Distribution: "demo", Version: "1!2.0rc1", Tags: []Tag{{"py3", "none", "any"}}}},
	} {
		got, err := ParseFilename(tc.file)
		if err != nil {
			t.Errorf("ParseFilename(%q): %v", tc.file, err)
			continue
		}
		tc.want.File = tc.file
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseFilename(%q) (-want +got):\n%s", tc.file, diff)
		}
	}
}

func TestParseFilenameRefuses(t *testing.T) {
	for _, file := range []string{
		"",
		"six-1.16.0-py2.py3-none-any.zip",
		"six-1.16.0-py2.py3-none.whl",
		"a-b-c-d-e-f-g.whl",
		"../six-1.16.0-py2.py3-none-any.whl",
		"dir/six-1.16.0-py2.py3-none-any.whl",
		`dir\six-1.16.0-py2.py3-none-any.whl`,
		"six-1..16-py2.py3-none-any.whl",
		"six-1.16.0-py2.py3-none-any\n.whl",
		"six\x00-1.16.0-py2.py3-none-any.whl",
		"-1.16.0-py3-none-any.whl",
		"_six-1.16.0-py3-none-any.whl",
		"six-1.16.0-x1-py3-none-any.whl",
		"six-1.16.0-py3..py2-none-any.whl",
		"six-1.16.0-py3.-none-any.whl",
		"six-1.16.0-py3-none-a%y.whl",
		"six-1.16.0-" + strings.Repeat("a.", 7) + "a-" + strings.Repeat("b.", 7) + "b-" + strings.Repeat("c.", 7) + "c.whl", // 512 tags
		strings.Repeat("a", 250) + "-1-py3-none-any.whl",
	} {
		n, err := ParseFilename(file)
		if !errors.Is(err, errdefs.Invalid) {
			t.Errorf("ParseFilename(%q) = %+v, %v; want invalid", file, n, err)
		}
	}
}

func TestNormalizeProject(t *testing.T) {
	for in, want := range map[string]string{
		"Typing_Extensions": "typing-extensions",
		"zope.interface":    "zope-interface",
		"a-_.b":             "a-b",
		"PyYAML":            "pyyaml",
		"a__":               "a-",
	} {
		if got := NormalizeProject(in); got != want {
			t.Errorf("NormalizeProject(%q) = %q, want %q", in, got, want)
		}
	}
}
