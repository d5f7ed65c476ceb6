package wheel

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
)

// zf is a member of a test wheel.
type zf struct {
	name, body string
	mode       fs.FileMode // the zip's mode; 0 is 0644
}

const distInfo = "demo-1.0.dist-info"

func pureFiles() []zf {
	return []zf{
		{name: "demo/__init__.py", body: "from .core import hello\n"},
		{name: "demo/core.py", body: "def hello():\n    return 'hello'\n"},
		{name: "demo/py.typed"},
		{name: distInfo + "/METADATA", body: "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
		{name: distInfo + "/WHEEL", body: "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{name: distInfo + "/top_level.txt", body: "demo\n"},
	}
}

func platFiles() []zf {
	return []zf{
		{name: distInfo + "/METADATA", body: "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
		{name: distInfo + "/WHEEL", body: "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"},
		{name: "demo/__init__.py", body: "\n"},
		{name: "demo-1.0.data/platlib/demo/_speedups.so", body: "\x7fELF not really", mode: 0o755},
		{name: "demo-1.0.data/purelib/demo/extra.py", body: "X = 1\n"},
		{name: "demo-1.0.data/scripts/demo-cli", body: "#!python\nimport demo\n", mode: 0o755},
		{name: "demo-1.0.data/scripts/demo.sh", body: "#!/bin/sh\necho hi\n"},
		{name: "demo-1.0.data/data/share/demo/demo.txt", body: "data\n"},
		{name: "demo-1.0.data/headers/demo.h", body: "int demo(void);\n"},
	}
}

func b64sum(body string) string {
	s := sha256.Sum256([]byte(body))
	return "sha256=" + base64.RawURLEncoding.EncodeToString(s[:])
}

// record returns a RECORD listing files, itself last.
func record(files []zf) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s,%s,%d\n", f.name, b64sum(f.body), len(f.body))
	}
	return b.String() + distInfo + "/RECORD,,\n"
}

// zipFiles zips files in order (deflated, stored under 16 bytes).
func zipFiles(t testing.TB, files []zf) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if len(f.body) < 16 {
			h.Method = zip.Store
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode &^ fs.ModeDir) // a trailing "/" makes a directory
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wheelOf zips files and a RECORD of them.
func wheelOf(t testing.TB, files []zf) []byte {
	return zipFiles(t, append(slices.Clone(files), zf{name: distInfo + "/RECORD", body: record(files)}))
}

const file = "demo-1.0-py3-none-any.whl"

func install(t *testing.T, data []byte, opts ...Option) (*Installed, string, error) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "site-packages")
	in, err := Install(context.Background(), bytes.NewReader(data), int64(len(data)), file, root, opts...)
	return in, root, err
}

// tree describes every file and directory under root: path, mode, mtime
// and content.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v %s", filepath.ToSlash(rel), fi.Mode(), fi.ModTime().UTC().Format(time.RFC3339))
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %q", data)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInstallPure(t *testing.T) {
	in, root, err := install(t, wheelOf(t, pureFiles()))
	if err != nil {
		t.Fatal(err)
	}
	row := func(f zf) string { return fmt.Sprintf("%s,%s,%d\n", f.name, b64sum(f.body), len(f.body)) }
	p := pureFiles()
	rec := row(zf{name: distInfo + "/INSTALLER", body: "prebake\n"}) + row(p[3]) + row(p[4]) + row(p[5]) +
		row(p[0]) + row(p[1]) + row(p[2]) + "demo-1.0.dist-info/RECORD,,\n"
	const epoch = "1970-01-01T00:00:01Z"
	want := []string{
		". drwxr-xr-x " + epoch,
		"demo drwxr-xr-x " + epoch,
		`demo/__init__.py -rw-r--r-- ` + epoch + ` "from .core import hello\n"`,
		`demo/core.py -rw-r--r-- ` + epoch + ` "def hello():\n    return 'hello'\n"`,
		`demo/py.typed -rw-r--r-- ` + epoch + ` ""`,
		"demo-1.0.dist-info drwxr-xr-x " + epoch,
		`demo-1.0.dist-info/INSTALLER -rw-r--r-- ` + epoch + ` "prebake\n"`,
		`demo-1.0.dist-info/METADATA -rw-r--r-- ` + epoch + fmt.Sprintf(" %q", pureFiles()[3].body),
		`demo-1.0.dist-info/RECORD -rw-r--r-- ` + epoch + fmt.Sprintf(" %q", rec),
		`demo-1.0.dist-info/WHEEL -rw-r--r-- ` + epoch + fmt.Sprintf(" %q", pureFiles()[4].body),
		`demo-1.0.dist-info/top_level.txt -rw-r--r-- ` + epoch + ` "demo\n"`,
	}
	if diff := cmp.Diff(want, tree(t, root)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	var paths []string
	for _, f := range in.Files {
		paths = append(paths, f.Path)
	}
	wantPaths := []string{"demo-1.0.dist-info/INSTALLER", "demo-1.0.dist-info/METADATA", "demo-1.0.dist-info/RECORD",
		"demo-1.0.dist-info/WHEEL", "demo-1.0.dist-info/top_level.txt", "demo/__init__.py", "demo/core.py", "demo/py.typed"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	if in.DistInfo != distInfo || !in.Purelib || in.Name.Project() != "demo" || in.Skipped != nil || in.Root != root {
		t.Errorf("Installed = %+v", in)
	}
	checkFiles(t, root, in)
}

// checkFiles checks Installed.Files against the disk and Size.
func checkFiles(t *testing.T, root string, in *Installed) {
	t.Helper()
	var size int64
	for _, f := range in.Files {
		data, err := os.ReadFile(filepath.Join(root, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(data) != f.SHA256 || int64(len(data)) != f.Size {
			t.Errorf("%s: Files says %d bytes %x, disk %d bytes", f.Path, f.Size, f.SHA256, len(data))
		}
		size += f.Size
	}
	if size != in.Size {
		t.Errorf("Size %d, files %d", in.Size, size)
	}
}

func TestInstallPlatlib(t *testing.T) {
	files := platFiles()
	for _, tc := range []struct {
		name    string
		opts    []Option
		want    []string // files other than the dist-info's
		skipped []string
	}{
		{"default", nil,
			[]string{"demo/__init__.py -rw-r--r--", "demo/_speedups.so -rwxr-xr-x", "demo/extra.py -rw-r--r--"},
			[]string{"demo-1.0.data/data/share/demo/demo.txt", "demo-1.0.data/headers/demo.h",
				"demo-1.0.data/scripts/demo-cli", "demo-1.0.data/scripts/demo.sh"}},
		{"scripts and data", []Option{WithScripts("bin", "/usr/bin/python3"), WithData(".")},
			[]string{"bin/demo-cli -rwxr-xr-x", "bin/demo.sh -rwxr-xr-x", "demo/__init__.py -rw-r--r--",
				"demo/_speedups.so -rwxr-xr-x", "demo/extra.py -rw-r--r--", "share/demo/demo.txt -rw-r--r--"},
			[]string{"demo-1.0.data/headers/demo.h"}},
		{"data under a dir", []Option{WithData("data")},
			[]string{"data/share/demo/demo.txt -rw-r--r--", "demo/__init__.py -rw-r--r--",
				"demo/_speedups.so -rwxr-xr-x", "demo/extra.py -rw-r--r--"},
			[]string{"demo-1.0.data/headers/demo.h", "demo-1.0.data/scripts/demo-cli", "demo-1.0.data/scripts/demo.sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, root, err := install(t, wheelOf(t, files), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range in.Files {
				if !strings.HasPrefix(f.Path, distInfo) {
					got = append(got, f.Path+" "+f.Mode.String())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, in.Skipped); diff != "" {
				t.Errorf("Skipped (-want +got):\n%s", diff)
			}
			if in.Purelib {
				t.Error("Purelib true for Root-Is-Purelib: false")
			}
			checkFiles(t, root, in)
			if slices.ContainsFunc(in.Files, func(f File) bool { return f.Path == "bin/demo-cli" }) {
				data, _ := os.ReadFile(filepath.Join(root, "bin/demo-cli"))
				if string(data) != "#!/usr/bin/python3\nimport demo\n" {
					t.Errorf("bin/demo-cli = %q", data)
				}
				data, _ = os.ReadFile(filepath.Join(root, "bin/demo.sh"))
				if string(data) != "#!/bin/sh\necho hi\n" {
					t.Errorf("bin/demo.sh = %q", data)
				}
			}
			// The new RECORD lists every file with its installed hash.
			rec, err := os.ReadFile(filepath.Join(root, distInfo, "RECORD"))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := parseRecord(rec, distInfo)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(in.Files) {
				t.Errorf("RECORD has %d rows, %d files", len(rows), len(in.Files))
			}
			for _, f := range in.Files {
				if r := rows[f.Path]; f.Path != distInfo+"/RECORD" && (!bytes.Equal(r.sum, f.SHA256[:]) || r.size != f.Size) {
					t.Errorf("RECORD row %s = %+v, file %+v", f.Path, r, f)
				}
			}
		})
	}
}

// TestInstallDeterministic installs the same wheel zipped in another order,
// with other zip mtimes: the trees are the same.
func TestInstallDeterministic(t *testing.T) {
	files := platFiles()
	_, a, err := install(t, wheelOf(t, files), WithScripts("bin", ""))
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(files)
	_, b, err := install(t, wheelOf(t, files), WithScripts("bin", ""))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tree(t, a), tree(t, b)); diff != "" {
		t.Errorf("trees differ:\n%s", diff)
	}
	epoch := time.Unix(1700000000, 0)
	_, c, err := install(t, wheelOf(t, files), WithEpoch(epoch))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(c, "demo", "extra.py"))
	if err != nil || !fi.ModTime().Equal(epoch) {
		t.Errorf("mtime with WithEpoch: %v, %v", fi.ModTime(), err)
	}
}

// rawZip writes members and their RECORD, stored, with headers a test
// forges (sizes).
func rawZip(t *testing.T, files []zf, forge func(h *zip.FileHeader)) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range append(slices.Clone(files), zf{name: distInfo + "/RECORD", body: record(files)}) {
		h := &zip.FileHeader{Name: f.name, Method: zip.Store, CompressedSize64: uint64(len(f.body)), UncompressedSize64: uint64(len(f.body))}
		h.SetMode(0o644)
		h.CRC32 = crc32.ChecksumIEEE([]byte(f.body))
		forge(h)
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
	}
	zw.Close()
	return buf.Bytes()
}

func TestInstallRefuses(t *testing.T) {
	good := pureFiles()
	with := func(extra ...zf) []zf { return append(slices.Clone(good), extra...) }
	zeros := strings.Repeat("\x00", 2<<20)
	for _, tc := range []struct {
		name string
		data func(t *testing.T) []byte
		opts []Option
		want error
	}{
		{"dot-dot member", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: "../evil.py", body: "x"})) }, nil, safepath.ErrUnsafe},
		{"deep dot-dot member", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: "demo/../../evil.py", body: "x"})) }, nil, safepath.ErrUnsafe},
		{"absolute member", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: "/etc/evil", body: "x"})) }, nil, safepath.ErrUnsafe},
		{"backslash member", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: `demo\..\..\evil.py`, body: "x"})) }, nil, safepath.ErrUnsafe},
		{"dot member", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: "demo/./x.py", body: "x"})) }, nil, safepath.ErrUnsafe},
		{"control char member", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: "demo/x\n.py", body: "x"})) }, nil, safepath.ErrUnsafe},
		{"dot-dot data member", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo-1.0.data/purelib/../../evil.py", body: "x"}))
		}, nil, safepath.ErrUnsafe},
		{"symlink member", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo/link.py", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}))
		}, nil, safepath.ErrUnsafe},
		{"fifo member", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo/fifo", mode: fs.ModeNamedPipe | 0o644}))
		}, nil, safepath.ErrUnsafe},
		{"symlink directory", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo/sub/", mode: fs.ModeSymlink | fs.ModeDir | 0o777}))
		}, nil, safepath.ErrUnsafe},
		{"member not in RECORD", func(t *testing.T) []byte {
			return zipFiles(t, append(with(zf{name: "demo/extra.py", body: "x"}), zf{name: distInfo + "/RECORD", body: record(good)}))
		}, nil, ErrRecord},
		{"RECORD hash mismatch", func(t *testing.T) []byte {
			files := with(zf{name: distInfo + "/RECORD", body: record(good)})
			files[1].body = "import os; os.system('evil')\n"
			return zipFiles(t, files)
		}, nil, ErrRecord},
		{"RECORD size mismatch", func(t *testing.T) []byte {
			rec := strings.Replace(record(good), fmt.Sprintf("%s,%d", b64sum(good[1].body), len(good[1].body)), b64sum(good[1].body)+",99", 1)
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: rec}))
		}, nil, ErrRecord},
		{"RECORD names a missing file", func(t *testing.T) []byte {
			rec := record(good) + "demo/gone.py," + b64sum("") + ",0\n"
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: rec}))
		}, nil, ErrRecord},
		{"RECORD path escaping", func(t *testing.T) []byte {
			rec := record(good) + "../../etc/passwd," + b64sum("") + ",0\n"
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: rec}))
		}, nil, safepath.ErrUnsafe},
		{"RECORD md5", func(t *testing.T) []byte {
			rec := strings.Replace(record(good), b64sum(good[0].body), "md5=1B2M2Y8AsgTpgAmY7PhCfg", 1)
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: rec}))
		}, nil, ErrRecord},
		{"RECORD without a hash", func(t *testing.T) []byte {
			rec := strings.Replace(record(good), b64sum(good[0].body), "", 1)
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: rec}))
		}, nil, ErrRecord},
		{"RECORD listing a file twice", func(t *testing.T) []byte {
			rec := record(good) + "demo/core.py," + b64sum(good[1].body) + ",33\n"
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: rec}))
		}, nil, ErrRecord},
		{"RECORD malformed", func(t *testing.T) []byte {
			return zipFiles(t, with(zf{name: distInfo + "/RECORD", body: "a,\"b\n"}))
		}, nil, ErrRecord},
		{"no RECORD", func(t *testing.T) []byte { return zipFiles(t, good) }, nil, ErrFormat},
		{"duplicate member", func(t *testing.T) []byte { return wheelOf(t, with(good[1])) }, nil, ErrDuplicate},
		{"members differing in case", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo/Core.py", body: "x"}))
		}, nil, ErrDuplicate},
		{"two members to one path", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo-1.0.data/purelib/demo/core.py", body: "x"}))
		}, nil, ErrDuplicate},
		{"a member over RECORD", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo-1.0.data/purelib/demo-1.0.dist-info/RECORD", body: "x"}))
		}, nil, ErrDuplicate},
		{"a file where a directory goes", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo/core.py/x.py", body: "x"}))
		}, nil, ErrDuplicate},
		{"zip bomb: total", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo/big", body: zeros}))
		}, []Option{WithMaxSize(1 << 20)}, ErrTooLarge},
		{"zip bomb: ratio", func(t *testing.T) []byte { return wheelOf(t, with(zf{name: "demo/big", body: zeros})) }, nil, ErrTooLarge},
		{"zip bomb: declared sizes", func(t *testing.T) []byte {
			return rawZip(t, with(zf{name: "demo/a"}, zf{name: "demo/b"}, zf{name: "demo/c"}), func(h *zip.FileHeader) {
				if strings.HasPrefix(h.Name, "demo/") && len(h.Name) == 6 {
					h.UncompressedSize64, h.CompressedSize64 = 1<<30, 1<<30
				}
			})
		}, nil, ErrTooLarge},
		{"too many members", func(t *testing.T) []byte { return wheelOf(t, good) }, []Option{WithMaxFiles(5)}, ErrTooLarge},
		{"a long path", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: strings.Repeat("d/", 600) + "x.py", body: "x"}))
		}, nil, safepath.ErrUnsafe},
		{"no dist-info", func(t *testing.T) []byte { return zipFiles(t, good[:3]) }, nil, ErrFormat},
		{"two dist-infos", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "other-1.0.dist-info/METADATA", body: "x"}))
		}, nil, ErrFormat},
		{"another project's dist-info", func(t *testing.T) []byte {
			files := wheelOf(t, good)
			return bytes.ReplaceAll(files, []byte("demo-1.0.dist-info"), []byte("evil-1.0.dist-info"))
		}, nil, ErrFormat},
		{"Wheel-Version 2", func(t *testing.T) []byte {
			files := slices.Clone(good)
			files[4].body = "Wheel-Version: 2.0\n"
			return wheelOf(t, files)
		}, nil, ErrFormat},
		{"no WHEEL", func(t *testing.T) []byte { return wheelOf(t, slices.Delete(slices.Clone(good), 4, 5)) }, nil, ErrFormat},
		{"unknown data scheme", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo-1.0.data/etc/passwd", body: "x"}))
		}, nil, ErrFormat},
		{"data file outside a scheme", func(t *testing.T) []byte {
			return wheelOf(t, with(zf{name: "demo-1.0.data/purelib", body: "x"}))
		}, nil, ErrFormat},
		{"not a zip", func(t *testing.T) []byte { return []byte("PK\x03\x04 not a zip") }, nil, ErrFormat},
		{"a size that lies", func(t *testing.T) []byte {
			return rawZip(t, with(zf{name: "demo/a", body: "0123456789"}), func(h *zip.FileHeader) {
				if h.Name == "demo/a" {
					h.UncompressedSize64 = 5
				}
			})
		}, nil, errdefs.Invalid},
		{"a CRC that lies", func(t *testing.T) []byte {
			data := rawZip(t, good, func(*zip.FileHeader) {})
			return bytes.Replace(data, []byte("def hello()"), []byte("def HELLO()"), 1)
		}, nil, zip.ErrChecksum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "site-packages")
			data := tc.data(t)
			_, err := Install(context.Background(), bytes.NewReader(data), int64(len(data)), file, root, tc.opts...)
			if !errors.Is(err, tc.want) || !errors.Is(err, errdefs.Invalid) {
				t.Fatalf("Install = %v, want %v (invalid)", err, tc.want)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), file) {
				t.Errorf("error %q does not name the wheel", err)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			// Check refuses what Install refuses, for the same reason.
			if cerr := Check(context.Background(), bytes.NewReader(data), int64(len(data)), file, tc.opts...); !errors.Is(cerr, tc.want) || !errors.Is(cerr, errdefs.Invalid) || !strings.Contains(cerr.Error(), file) {
				t.Errorf("Check = %v, want %v (invalid) naming the wheel", cerr, tc.want)
			}
		})
	}
}

func TestInstallRoot(t *testing.T) {
	data := wheelOf(t, pureFiles())
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(context.Background(), bytes.NewReader(data), int64(len(data)), file, empty); err != nil {
		t.Errorf("into an empty directory: %v", err)
	}
	if _, err := Install(context.Background(), bytes.NewReader(data), int64(len(data)), file, empty); !errors.Is(err, errdefs.BadArgument) {
		t.Errorf("into a full directory: %v, want a bad argument", err)
	}
	nested := filepath.Join(dir, "a", "b", "site-packages")
	if _, err := Install(context.Background(), bytes.NewReader(data), int64(len(data)), file, nested); err != nil {
		t.Errorf("under missing parents: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := filepath.Join(dir, "cancelled")
	if _, err := Install(ctx, bytes.NewReader(data), int64(len(data)), file, gone); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cancelled install left %s: %v", gone, err)
	}
	if _, err := InstallFile(context.Background(), filepath.Join(dir, "missing-1.0-py3-none-any.whl"), gone); !errors.Is(err, errdefs.NotFound) {
		t.Errorf("missing wheel: %v", err)
	}
	if _, err := InstallFile(context.Background(), dir, gone); !errors.Is(err, errdefs.Invalid) {
		t.Errorf("a directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo-1.0-py3-none-any.whl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallFile(context.Background(), fifo, gone); !errors.Is(err, errdefs.Invalid) {
		t.Errorf("a FIFO: %v", err)
	}
	if _, err := Install(context.Background(), bytes.NewReader(data), int64(len(data)), "demo.zip", gone); !errors.Is(err, errdefs.Invalid) {
		t.Errorf("a bad file name: %v", err)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, opt := range []Option{
		WithMaxSize(0), WithMaxRatio(-1), WithMaxFiles(0), WithScripts("", ""), WithScripts("/bin", ""), WithScripts("../bin", ""),
		WithScripts("bin", "python3"), WithScripts("bin", "/usr/bin/env python3"), WithData("a//b"), WithData("a/"),
	} {
		if _, err := makeOptions([]Option{opt}); !errors.Is(err, errdefs.BadArgument) || errdefs.OptionOf(err) == "" {
			t.Errorf("makeOptions: %v, want a bad option", err)
		}
	}
	if _, err := makeOptions([]Option{WithScripts("x", ""), WithData("x")}); !errors.Is(err, errdefs.BadArgument) {
		t.Errorf("scripts and data in one directory: %v", err)
	}
}
