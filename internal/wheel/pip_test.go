package wheel

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// realWheels returns real wheels found on this machine: the ones ensurepip
// bundles with python3, and six 1.16.0 and jupyterlab_pygments 0.3.0 (it
// has .data/data) fetched by pip (PyPI as pip is configured), when it can.
func realWheels(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("python3", "-c", `import ensurepip, glob, os
print("\n".join(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "*.whl"))))`).Output()
	if err != nil {
		t.Logf("no ensurepip wheels: %v", err)
	}
	wheels := strings.Fields(string(out))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	dl := exec.CommandContext(ctx, "python3", "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q",
		"--only-binary=:all:", "six==1.16.0", "jupyterlab_pygments==0.3.0", "-d", dir)
	if out, err := dl.CombinedOutput(); err != nil {
		t.Logf("pip download: %v\n%s", err, out)
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	return append(wheels, found...)
}

// pipTree describes the files under root, path → sha256 and executable
// bit, leaving out what only pip writes (its INSTALLER, RECORD, REQUESTED,
// direct_url.json, __pycache__, and the console scripts in bin) and our
// INSTALLER and RECORD.
func pipTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		dir, base := filepath.Dir(rel), filepath.Base(rel)
		if strings.HasPrefix(rel, "bin/") || strings.Contains(rel, "__pycache__/") ||
			strings.HasSuffix(dir, ".dist-info") && (base == "INSTALLER" || base == "RECORD" || base == "REQUESTED" || base == "direct_url.json") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%x x=%v", sha256.Sum256(data), fi.Mode()&0o111 != 0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstallMatchesPip installs real wheels with Install (.data/data at
// root, as pip does) and with pip install --target: the same files, the
// same content.
func TestInstallMatchesPip(t *testing.T) {
	if err := exec.Command("python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("no python3 with pip: %v", err)
	}
	wheels := realWheels(t)
	if len(wheels) == 0 {
		t.Skip("no real wheel on this machine")
	}
	for _, w := range wheels {
		t.Run(filepath.Base(w), func(t *testing.T) {
			dir := t.TempDir()
			ours, theirs := filepath.Join(dir, "ours"), filepath.Join(dir, "pip")
			in, err := InstallFile(context.Background(), w, ours, WithData("."))
			if err != nil {
				t.Fatal(err)
			}
			pip := exec.Command("python3", "-m", "pip", "install", "--isolated", "--no-deps", "--no-index", "--no-compile",
				"--disable-pip-version-check", "-q", "--target", theirs, w)
			if out, err := pip.CombinedOutput(); err != nil {
				t.Fatalf("pip install: %v\n%s", err, out)
			}
			got, want := pipTree(t, ours), pipTree(t, theirs)
			if len(want) < 3 || len(got) != len(in.Files)-2 {
				t.Errorf("pip installed %d files, Install %d (%d with INSTALLER and RECORD)", len(want), len(got), len(in.Files))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Install vs pip install --target (-pip +ours):\n%s", diff)
			}
			t.Logf("%d files, %d bytes, %d skipped", len(in.Files), in.Size, len(in.Skipped))
		})
	}
}
