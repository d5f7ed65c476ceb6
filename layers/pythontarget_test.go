package layers

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/prebake/prebake/errdefs"
)

// pyTarEntry is one entry of a test layer: a regular file (data), a
// symbolic link (link) or a directory (name ending in /).
type pyTarEntry struct {
	name, link string
	data       []byte
}

func tarLayer(t *testing.T, entries ...pyTarEntry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o755}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pythonTestImage writes an image of the layers (arch in its config, a
// random first layer) to an OCI layout and returns its reference.
func pythonTestImage(t *testing.T, arch string, ls ...v1.Layer) string {
	t.Helper()
	noise, err := random.Layer(512, "application/vnd.oci.image.layer.v1.tar")
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, append([]v1.Layer{noise}, ls...)...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "img")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	return OCIPrefix + dir
}

func TestInspectPython(t *testing.T) {
	libc236 := append(append([]byte("\x7fELF junk\x00"), bytes.Repeat([]byte{0}, 4096)...),
		"GNU C Library (Debian GLIBC 2.36-9+deb12u4) stable release version 2.36.\n\x00"...)
	tests := []struct {
		name    string
		arch    string
		layers  [][]pyTarEntry
		want    *ImagePython
		wantErr error
		kind    errdefs.Kind
	}{{
		name: "debian 12: usrmerge, libc.so.6 a file, python3 a link",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "./bin", link: "usr/bin"},
			{name: "./usr/bin/python3", link: "python3.11"},
			{name: "./usr/bin/python3.11", data: []byte("elf")},
			{name: "./usr/lib/python3.11/"},
			{name: "./usr/lib/x86_64-linux-gnu/libc.so.6", data: libc236},
		}},
		want: &ImagePython{Interpreter: "/usr/bin/python3", Version: "3.11", Machine: "x86_64", Glibc: "2.36"},
	}, {
		name: "debian 11: libc.so.6 -> libc-2.31.so, arm64",
		arch: "arm64",
		layers: [][]pyTarEntry{{
			{name: "lib/aarch64-linux-gnu/libc.so.6", link: "libc-2.31.so"},
			{name: "lib/aarch64-linux-gnu/libc-2.31.so", data: []byte("x")},
			{name: "usr/bin/python3", link: "/usr/bin/python3.9"},
			{name: "usr/bin/python3.9", data: []byte("elf")},
		}},
		want: &ImagePython{Interpreter: "/usr/bin/python3", Version: "3.9", Machine: "aarch64", Glibc: "2.31"},
	}, {
		name: "alpine: musl, python3 in /usr/local/bin wins over /usr/bin",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "lib/ld-musl-x86_64.so.1", data: []byte("x")},
			{name: "usr/bin/python3", link: "python3.10"},
			{name: "usr/bin/python3.10", data: []byte("x")},
		}, {
			{name: "usr/local/bin/python3", link: "python3.12"},
			{name: "usr/local/bin/python3.12", data: []byte("x")},
		}},
		want: &ImagePython{Interpreter: "/usr/local/bin/python3", Version: "3.12", Machine: "x86_64", Musl: "1.2"},
	}, {
		name: "python3 a file: its python3.N sibling, else lib/python3.N",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "usr/bin/python3", data: []byte("x")},
			{name: "usr/lib/python3.8/os.py", data: []byte("x")},
			{name: "usr/lib/python3.13/os.py", data: []byte("x")},
			{name: "usr/lib64/libc.so.6", link: "libc-2.28.so"},
		}},
		want: &ImagePython{Interpreter: "/usr/bin/python3", Version: "3.13", Machine: "x86_64", Glibc: "2.28"},
	}, {
		name: "the top layer wins: python3 relinked",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "usr/bin/python3", link: "python3.9"},
			{name: "usr/bin/python3.9", data: []byte("x")},
			{name: "lib/x86_64-linux-gnu/libc.so.6", link: "libc-2.31.so"},
		}, {
			{name: "usr/bin/python3", link: "python3.11"},
			{name: "usr/bin/python3.11", data: []byte("x")},
		}},
		want: &ImagePython{Interpreter: "/usr/bin/python3", Version: "3.11", Machine: "x86_64", Glibc: "2.31"},
	}, {
		name: "a whiteout removes python3",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "usr/bin/python3", link: "python3.11"},
			{name: "usr/bin/python3.11", data: []byte("x")},
			{name: "lib/x86_64-linux-gnu/libc.so.6", link: "libc-2.31.so"},
		}, {
			{name: "usr/bin/.wh.python3", data: nil},
		}},
		wantErr: ErrNoPython, kind: errdefs.BadArgument,
	}, {
		name: "an opaque directory removes python3",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "usr/local/bin/python3", link: "python3.11"},
			{name: "usr/local/bin/python3.11", data: []byte("x")},
			{name: "lib/x86_64-linux-gnu/libc.so.6", link: "libc-2.31.so"},
		}, {
			{name: "usr/local/bin/.wh..wh..opq", data: nil},
		}},
		wantErr: ErrNoPython, kind: errdefs.BadArgument,
	}, {
		name:    "no python3",
		arch:    "amd64",
		layers:  [][]pyTarEntry{{{name: "lib/x86_64-linux-gnu/libc.so.6", data: libc236}}},
		wantErr: ErrNoPython, kind: errdefs.BadArgument,
	}, {
		name: "a link loop",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "usr/bin/python3", link: "python3.x"},
			{name: "usr/bin/python3.x", link: "python3"},
		}},
		wantErr: ErrNoPython, kind: errdefs.BadArgument,
	}, {
		name: "no C library",
		arch: "amd64",
		layers: [][]pyTarEntry{{
			{name: "usr/bin/python3", link: "python3.11"},
			{name: "usr/bin/python3.11", data: []byte("x")},
		}},
		kind: errdefs.BadArgument,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ls []v1.Layer
			for _, l := range tc.layers {
				ls = append(ls, tarLayer(t, l...))
			}
			ref := pythonTestImage(t, tc.arch, ls...)
			got, err := InspectPython(context.Background(), ref, WithCacheDir(t.TempDir()))
			if tc.kind != errdefs.Unknown {
				if err == nil {
					t.Fatalf("InspectPython = %+v, want an error", got)
				}
				if k := errdefs.KindOf(err); k != tc.kind {
					t.Errorf("kind %s, want %s: %v", k, tc.kind, err)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("error %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), ref) {
					t.Errorf("error %q does not name the image", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(ImagePython{}, "Ref")); diff != "" {
				t.Errorf("InspectPython (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(got.Ref, ref+"@sha256:") {
				t.Errorf("Ref %q, want %s@sha256:…", got.Ref, ref)
			}
		})
	}
}

func TestInspectPythonCachesLayers(t *testing.T) {
	l := tarLayer(t, pyTarEntry{name: "usr/bin/python3", link: "python3.11"}, pyTarEntry{name: "usr/bin/python3.11", data: []byte("cached")},
		pyTarEntry{name: "lib/x86_64-linux-gnu/libc.so.6", link: "libc-2.31.so"})
	ref := pythonTestImage(t, "amd64", l)
	dir := t.TempDir()
	if _, err := InspectPython(context.Background(), ref, WithCacheDir(dir)); err != nil {
		t.Fatal(err)
	}
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "python-index", d.Hex+".json"))
	if len(matches) != 1 {
		t.Errorf("no python-index entry for layer %s under %s", d, dir)
	}
}

func TestGlibcOfBytesBounded(t *testing.T) {
	far := append(bytes.Repeat([]byte{0}, maxLibcRead), "GNU C Library stable release version 2.99."...)
	if v, err := glibcOfBytes(bytes.NewReader(far)); err != nil || v != "" {
		t.Errorf("glibcOfBytes past the bound = %q, %v; want \"\"", v, err)
	}
	if v, _ := glibcOfBytes(strings.NewReader("GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable release version 2.35.")); v != "2.35" {
		t.Errorf("glibcOfBytes = %q, want 2.35", v)
	}
}
