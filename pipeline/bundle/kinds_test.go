package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
)

// wheelFixture is newFixture's two jars plus a wheel: a version 2 lock,
// its paths index for index.
func wheelFixture(t *testing.T) fixture {
	t.Helper()
	f := newFixture(t)
	byFile := map[string]string{}
	for i, a := range f.lock.Artifacts {
		byFile[a.File] = f.paths[i]
	}
	const six = "six-1.16.0-py2.py3-none-any.whl"
	wp := sitepkgstest.AddWheels(t, f.lock, map[string][]byte{
		six: sitepkgstest.Wheel(t, "six", "1.16.0", sitepkgstest.File{Name: "six.py", Body: "X = 1\n"})})
	byFile[six] = wp[0]
	f.paths = nil
	for _, a := range f.lock.Artifacts {
		f.paths = append(f.paths, byFile[a.File])
	}
	return f
}

// TestBundleWheels: a lock with a Python half is exported with its wheels
// (wheels/<file>, after the jars) in both forms, reproducibly, and
// imported back: every blob in the cache by its sha256, the lock as it
// was; a bundle of jars only is what it was (no wheels entry).
func TestBundleWheels(t *testing.T) {
	f := wheelFixture(t)
	dir := t.TempDir()
	for _, to := range []string{filepath.Join(dir, "b.tar"), "oci:" + filepath.Join(dir, "layout")} {
		res := export(t, f, to)
		if res.Jars != 2 || res.Wheels != 1 || res.LockHash != f.lock.Hash() {
			t.Fatalf("%s: export %+v", to, res)
		}
		if again := export(t, f, to); again.Digest != res.Digest {
			t.Errorf("%s: not reproducible: %s then %s", to, res.Digest, again.Digest)
		}
		cache := t.TempDir()
		imp, err := Import(context.Background(), to, cache)
		if err != nil {
			t.Fatalf("%s: import: %v", to, err)
		}
		if imp.Jars != 2 || imp.Wheels != 1 || imp.LockHash != f.lock.Hash() || len(imp.Paths) != 3 {
			t.Fatalf("%s: import %+v", to, imp)
		}
		for i, a := range imp.Lock.Artifacts {
			data, err := os.ReadFile(imp.Paths[i])
			if s := sha256.Sum256(data); err != nil || hex.EncodeToString(s[:]) != a.Sha256 {
				t.Errorf("%s: %s: %v, sha256 %x, want %s", to, a.File, err, s, a.Sha256)
			}
		}
		if len(imp.Lock.Wheels()) != 1 {
			t.Errorf("%s: the imported lock has %d wheels", to, len(imp.Lock.Wheels()))
		}
	}
	tarData, err := os.ReadFile(filepath.Join(dir, "b.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(tarData, []byte(WheelDir+"six-1.16.0-py2.py3-none-any.whl")) {
		t.Error("the tar holds no wheels/ entry")
	}
	// A jar-only lock's bundle names no wheels directory.
	jars := newFixture(t)
	export(t, jars, filepath.Join(dir, "jars.tar"))
	if data, _ := os.ReadFile(filepath.Join(dir, "jars.tar")); bytes.Contains(data, []byte(WheelDir)) {
		t.Error("a jar-only bundle mentions wheels/")
	}
}

// TestParseIndexWheelOrder: wheels come after the jars and before the
// signatures; a wheel entry that is not the lock's is refused.
func TestParseIndexWheelOrder(t *testing.T) {
	h := strings.Repeat("ab", 32)
	entry := func(p string) Entry { return Entry{Path: p, Sha256: h, Size: 1} }
	head := []Entry{entry(LockName), entry(SBOMName)}
	for _, tc := range []struct {
		name  string
		files []Entry
		ok    bool
	}{
		{"jars, wheels, signatures", append(head[:2:2], entry("jars/a.jar"), entry("wheels/a-1-py3-none-any.whl"), entry("signatures/a.jar.asc")), true},
		{"a jar after a wheel", append(head[:2:2], entry("wheels/a-1-py3-none-any.whl"), entry("jars/a.jar")), false},
		{"a wheel after a signature", append(head[:2:2], entry("signatures/a.jar.asc"), entry("wheels/a-1-py3-none-any.whl")), false},
		{"wheels unsorted", append(head[:2:2], entry("wheels/b-1-py3-none-any.whl"), entry("wheels/a-1-py3-none-any.whl")), false},
		{"a wheel path escaping", append(head[:2:2], entry("wheels/../x")), false},
	} {
		data, _ := json.Marshal(Index{Files: tc.files, LockHash: h, Version: IndexVersion})
		_, err := ParseIndex("b.tar", data, DefaultLimits)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrBadBundle) {
			t.Errorf("%s: %v, ok %v", tc.name, err, tc.ok)
		}
	}
	f := wheelFixture(t)
	ix := &Index{LockHash: f.lock.Hash()}
	for _, a := range f.lock.Artifacts {
		ix.Files = append(ix.Files, Entry{Path: JarDir + a.File, Sha256: a.Sha256, Size: a.Size}) // the wheel misfiled under jars/
	}
	ix.Files = append([]Entry{entry(LockName), entry(SBOMName)}, ix.Files...)
	if err := ix.checkLock("b.tar", f.lock); !errors.Is(err, ErrBadBundle) || !strings.Contains(err.Error(), "not an artifact of the lock") {
		t.Errorf("a wheel under jars/: %v", err)
	}
}
