package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/resolver/pypi"
)

func TestParsePythonTarget(t *testing.T) {
	tests := []struct {
		version, platform string
		want              pypi.Target
		wantErr           bool
	}{
		{"3.11", "manylinux_2_36_x86_64", pypi.Target{Target: wheel.Target{PythonVersion: "3.11", Platform: "x86_64", Glibc: "2.36"}}, false},
		{"3.10", "manylinux2014_aarch64", pypi.Target{Target: wheel.Target{PythonVersion: "3.10", Platform: "aarch64", Glibc: "2.17"}}, false},
		{"3.12", "musllinux_1_2_x86_64", pypi.Target{Target: wheel.Target{PythonVersion: "3.12", Platform: "x86_64", Musl: "1.2"}}, false},
		{"3.11", "linux_x86_64", pypi.Target{Target: wheel.Target{PythonVersion: "3.11", Platform: "x86_64"}}, false},
		{"3", "manylinux_2_36_x86_64", pypi.Target{}, true},
		{"3.11.2", "manylinux_2_36_x86_64", pypi.Target{}, true},
		{"3.x", "manylinux_2_36_x86_64", pypi.Target{}, true},
		{"3.11", "win_amd64", pypi.Target{}, true},
		{"3.11", "macosx_11_0_arm64", pypi.Target{}, true},
		{"3.11", "manylinux_2_x_x86_64", pypi.Target{}, true},
		{"3.11", "manylinux_2_36_", pypi.Target{}, true},
		{"3.11", "linux_../x", pypi.Target{}, true},
		{"3.11", "", pypi.Target{}, true},
	}
	for _, tt := range tests {
		got, err := ParsePythonTarget(tt.version, tt.platform)
		if tt.wantErr {
			if !errors.Is(err, errdefs.BadArgument) {
				t.Errorf("%s %s: %v, want a bad argument", tt.version, tt.platform, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tt.version, tt.platform, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tt.version, tt.platform, diff)
		}
	}
}

func TestSourceURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:secret@pypi.example/simple/": "https://pypi.example/simple/",
		"file:///srv/wheels":                       "file:///srv/wheels",
		"/srv/wheels":                              "file:///srv/wheels",
	} {
		if got := sourceURL(in); got != want {
			t.Errorf("sourceURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImagePlatformTag(t *testing.T) {
	tests := []struct {
		in   layers.ImagePython
		want string
	}{
		{layers.ImagePython{Version: "3.11", Machine: "x86_64", Glibc: "2.36"}, "manylinux_2_36_x86_64"},
		{layers.ImagePython{Version: "3.12", Machine: "aarch64", Musl: "1.2"}, "musllinux_1_2_aarch64"},
		{layers.ImagePython{Version: "3.12", Machine: "s390x"}, "linux_s390x"},
	}
	for _, tc := range tests {
		got := ImagePlatformTag(&tc.in)
		if got != tc.want {
			t.Errorf("ImagePlatformTag(%+v) = %q, want %q", tc.in, got, tc.want)
		}
		tg, err := ParsePythonTarget(tc.in.Version, got)
		if err != nil {
			t.Fatal(err)
		}
		if back := PythonPlatformTag(tg); back != tc.want {
			t.Errorf("PythonPlatformTag(%+v) = %q, want %q", tg, back, tc.want)
		}
	}
}

func TestPythonTargetFromImageWithoutPython(t *testing.T) {
	ref := layers.OCIPrefix + filepath.Join(t.TempDir(), "img") + ":nopy"
	if _, err := layers.BuildImage(context.Background(), layers.BuildSpec{Target: ref, Platforms: []layers.PlatformFiles{{Platform: "linux/amd64"}}}); err != nil {
		t.Fatal(err)
	}
	_, err := PythonTargetFromImage(context.Background(), ref)
	if errdefs.KindOf(err) != errdefs.BadArgument || errdefs.OptionOf(err) != OptionPythonTargetFromImage || !errors.Is(err, layers.ErrNoPython) {
		t.Fatalf("PythonTargetFromImage = %v (kind %s, option %q), want BadArgument, %s, layers.ErrNoPython", err, errdefs.KindOf(err), errdefs.OptionOf(err), OptionPythonTargetFromImage)
	}
	if !strings.Contains(err.Error(), ref) {
		t.Errorf("error %q does not name the image", err)
	}
}
