package wheel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// TestPlanIsInstall: Plan lists exactly the files Install writes (paths,
// sizes, modes, sha256s, INSTALLER and RECORD included) and Open reads the
// bytes Install wrote, for a pure and a platlib wheel.
func TestPlanIsInstall(t *testing.T) {
	for name, files := range map[string][]zf{"pure": pureFiles(), "platlib": platFiles()} {
		t.Run(name, func(t *testing.T) {
			data := wheelOf(t, files)
			in, root, err := install(t, data)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Plan(context.Background(), bytes.NewReader(data), int64(len(data)), file)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(in.Files, p.Files); d != "" {
				t.Errorf("files (-install +plan):\n%s", d)
			}
			if d := cmp.Diff(in.Skipped, p.Skipped); d != "" {
				t.Errorf("skipped (-install +plan):\n%s", d)
			}
			if p.Size != in.Size || p.DistInfo != in.DistInfo || p.Purelib != in.Purelib {
				t.Errorf("plan %d %s %t, install %d %s %t", p.Size, p.DistInfo, p.Purelib, in.Size, in.DistInfo, in.Purelib)
			}
			for _, f := range p.Files {
				rc, err := p.Open(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) || sha256.Sum256(got) != f.SHA256 {
					t.Errorf("%s: plan read %q, install wrote %q", f.Path, got, want)
				}
			}
		})
	}
}

// TestPlanRefuses: what Install refuses, Plan refuses (before a read, or
// at the end of the member's read for a member whose bytes are not
// RECORD's); a wheel whose installed bytes are not its members' is
// ErrNotStreamable.
func TestPlanRefuses(t *testing.T) {
	good := pureFiles()
	lying := wheelOf(t, good)
	// The same RECORD, another body of the same size for demo/core.py.
	bad := zipFiles(t, append(withBody(good, "demo/core.py", "def hello():\n    return 'HELLO'\n"), zf{name: distInfo + "/RECORD", body: record(good)}))
	p, err := Plan(context.Background(), bytes.NewReader(bad), int64(len(bad)), file)
	if err != nil {
		t.Fatalf("plan of a wheel whose member lies: %v (the member is checked as it is read)", err)
	}
	rc, err := p.Open("demo/core.py")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, ErrRecord) || !errors.Is(err, errdefs.Invalid) {
		t.Errorf("reading a member whose bytes are not RECORD's: %v", err)
	}
	if _, err := Plan(context.Background(), bytes.NewReader(lying), int64(len(lying)), file, WithScripts("bin", "/usr/bin/python3")); err != nil {
		t.Errorf("a wheel without scripts: %v", err)
	}
	scripts := wheelOf(t, platFiles())
	if _, err := Plan(context.Background(), bytes.NewReader(scripts), int64(len(scripts)), file, WithScripts("bin", "/usr/bin/python3")); !errors.Is(err, ErrNotStreamable) {
		t.Errorf("a script whose #!python line is rewritten: %v, want ErrNotStreamable", err)
	}
	// A skipped member (headers) that lies is refused by Plan itself.
	plat := platFiles()
	skipLies := zipFiles(t, append(withBody(plat, "demo-1.0.data/headers/demo.h", "int omed(void);\n"), zf{name: distInfo + "/RECORD", body: record(plat)}))
	if _, err := Plan(context.Background(), bytes.NewReader(skipLies), int64(len(skipLies)), file); !errors.Is(err, ErrRecord) {
		t.Errorf("a skipped member whose bytes are not RECORD's: %v", err)
	}
	if _, err := Plan(context.Background(), bytes.NewReader(skipLies), int64(len(skipLies)), "not-a-wheel.zip"); err == nil {
		t.Error("a bad file name is planned")
	}
}

// withBody is files with the body of name replaced.
func withBody(files []zf, name, body string) []zf {
	out := make([]zf, len(files))
	copy(out, files)
	for i := range out {
		if out[i].name == name {
			out[i].body = body
		}
	}
	return out
}
