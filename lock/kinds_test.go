package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// pythonGolden is the version 2 golden: one jar and two wheels (their
// sha256 and sizes are synthetic). lockdiff and sbom render it too.
const pythonGolden = "../testdata/lockdiff/python.lock"

// legacyHash is the lock hash as prebake computed it before artifact
// kinds existed (commit ca5a4ec), kept here so the test does not trust the
// code it checks.
func legacyHash(arts []Artifact) string {
	arts = slices.Clone(arts)
	slices.SortFunc(arts, func(a, b Artifact) int { return strings.Compare(a.File, b.File) })
	var b strings.Builder
	b.WriteString("prebake-lock-v1\n")
	for _, a := range arts {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", a.Coord, a.File, a.Sha256)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// goldenLocks are the repository's lockfiles (testdata, examples).
func goldenLocks(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{"../testdata", "../examples"} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
				out = append(out, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d lockfiles in testdata and examples, want at least 5: %v", len(out), out)
	}
	return out
}

// pinned are the lock hash and inputsHash of every jar-only lockfile in
// the repository as computed at commit ca5a4ec, before artifact kinds. (The
// central lock records an older inputsHash than it computes, at that
// commit as now.)
var pinned = map[string][2]string{
	"../testdata/lockdiff/base.lock":                    {"191f0c396cef51a9010632b46c77dc95c87718bac66a8a82eb9b9bd8026fd86e", "ae6fe16faf2a91e281d5ebe0dcc48438767ecb1058bfe1f1fbe02a1f0d8c053c"},
	"../testdata/lockdiff/content-changed.lock":         {"39346467f4a3159c6c0d3323f6f033e5cdf4ad58f624994564bd4655d1b68094", "ae6fe16faf2a91e281d5ebe0dcc48438767ecb1058bfe1f1fbe02a1f0d8c053c"},
	"../testdata/lockdiff/inputs-changed.lock":          {"c0307a274bac51f6acc8d7421c246bd697e2f6e7123d828ce2ce337bda755236", "531f490395097b125e972442fe713eb40e8f15f57ae7375959e72c05f5141c3b"},
	"../testdata/central/locks/httpclient-central.lock": {"ba12af81087199048d45fc251f515c8af3d9a5544160f2a9287611e74361aa65", "963be9861e037b3e28c6adb72ba5943565b05039b8abd23d787bed5b01968ff6"},
	"../examples/locks/etl.lock":                        {"999dc2e729be6b45ee4b84bcf3ca32698f77106c643fbee665bc006875def94a", "14940d2182059915f12bb953bd6375ef8d7afc11d789cbab02a4f0b64182d789"}, // a real lock since issue 42 (LOW 2)
}

// TestGoldenLocksUnchanged: every jar-only lockfile in the repository
// reads, keeps the lock hash and inputsHash of the code before artifact
// kinds, is version 1, has only jars, and marshals back byte for byte, so
// image annotations, S3 set names and cache-hit tags keep their names. A
// new jar-only lockfile must be pinned here.
func TestGoldenLocksUnchanged(t *testing.T) {
	for _, p := range goldenLocks(t) {
		t.Run(p, func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Parse(p, data)
			if err != nil {
				t.Fatal(err)
			}
			out, err := l.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(data), string(out)); diff != "" {
				t.Errorf("marshalled back (-file +marshalled):\n%s", diff)
			}
			if l.HasPython() {
				if p != pythonGolden && p != "../testdata/lockdiff/python-changed.lock" {
					t.Errorf("an unexpected Python lock")
				}
				return
			}
			want, ok := pinned[p]
			if !ok {
				t.Fatalf("not pinned: add {%q, %q}", l.Hash(), ComputeInputsHash(l.Inputs))
			}
			if got := [2]string{l.Hash(), ComputeInputsHash(l.Inputs)}; got != want || legacyHash(l.Artifacts) != want[0] {
				t.Errorf("hashes %v, want %v (legacy form %s)", got, want, legacyHash(l.Artifacts))
			}
			l.Normalize()
			if l.Version != SchemaVersion || len(l.Jars()) != len(l.Artifacts) || len(l.Wheels()) != 0 || l.LockHash != want[0] {
				t.Errorf("normalized: version %d, %d jars of %d, %d wheels, lockHash %s", l.Version, len(l.Jars()), len(l.Artifacts), len(l.Wheels()), l.LockHash)
			}
		})
	}
}

func readPython(t *testing.T) *File {
	t.Helper()
	l, err := Read(pythonGolden)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestKindAccessors(t *testing.T) {
	l := readPython(t)
	files := func(as []Artifact) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.File)
		}
		return out
	}
	if diff := cmp.Diff([]string{"org.slf4j_slf4j-api-2.0.7.jar"}, files(l.Jars())); diff != "" {
		t.Errorf("Jars (-want +got):\n%s", diff)
	}
	want := []string{"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "typing_extensions-4.12.2-py3-none-any.whl"}
	if diff := cmp.Diff(want, files(l.Wheels())); diff != "" {
		t.Errorf("Wheels (-want +got):\n%s", diff)
	}
	err := l.JarsOnly("bake image")
	if !errors.Is(err, ErrUnsupportedKind) || !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), "bake image") || !strings.Contains(err.Error(), want[0]) {
		t.Errorf("JarsOnly = %v, want ErrUnsupportedKind (invalid) naming the consumer and the wheel", err)
	}
	jarOnly := sample()
	jarOnly.Normalize()
	if err := jarOnly.JarsOnly("x"); err != nil {
		t.Errorf("JarsOnly of a jar-only lock: %v", err)
	}
	if got := jarOnly.Jars(); &got[0] != &jarOnly.Artifacts[0] {
		t.Error("Jars of a jar-only lock is a copy, want the lock's own slice")
	}
	if jarOnly.HasPython() || !l.HasPython() {
		t.Errorf("HasPython: jar-only %v, python %v", jarOnly.HasPython(), l.HasPython())
	}
}

// TestHashKinds: jars hash as they always did; a wheel extends the
// canonical form with its kind, so a wheel never hashes as a jar; the
// Python inputs enter inputsHash only when present.
func TestHashKinds(t *testing.T) {
	jars := sample()
	jars.Normalize()
	if jars.Hash() != legacyHash(jars.Artifacts) {
		t.Errorf("jar-only hash %s, legacy %s", jars.Hash(), legacyHash(jars.Artifacts))
	}
	explicit := sample()
	for i := range explicit.Artifacts {
		explicit.Artifacts[i].Kind = KindJar
	}
	if explicit.Hash() != jars.Hash() {
		t.Errorf(`"kind": "jar" changed the hash`)
	}
	explicit.Normalize()
	if diff := cmp.Diff(jars, explicit); diff != "" {
		t.Errorf(`Normalize keeps "kind": "jar" (-want +got):\n%s`, diff)
	}

	l := readPython(t)
	if l.Hash() == legacyHash(l.Artifacts) {
		t.Error("a lock with wheels hashes as the legacy jar form")
	}
	other := readPython(t)
	w := &other.Artifacts[0]
	w.Version = "1.26.5" // same file and sha256, another version
	if other.Hash() == l.Hash() {
		t.Error("a wheel's version is outside the lock hash")
	}
	// A jar and a wheel with the same file and sha256 never hash alike.
	a := &File{Artifacts: []Artifact{{Coord: "g:a:1", File: "x-1-py3-none-any.whl", Sha256: strings.Repeat("a", 64)}}}
	b := &File{Artifacts: []Artifact{{Kind: KindWheel, Name: "x", Version: "1", File: "x-1-py3-none-any.whl", Sha256: strings.Repeat("a", 64)}}}
	if a.Hash() == b.Hash() {
		t.Error("a wheel and a jar with the same file and sha256 share a lock hash")
	}

	in := jars.Inputs
	withPy := in
	withPy.Python = &PythonInputs{Version: "3.11", Platforms: []string{"any"}}
	if ComputeInputsHash(in) == ComputeInputsHash(withPy) {
		t.Error("inputs.python is outside inputsHash")
	}
	p2 := *withPy.Python
	p2.Requirements = []string{"six"}
	withPy2 := in
	withPy2.Python = &p2
	if ComputeInputsHash(withPy) == ComputeInputsHash(withPy2) {
		t.Error("python requirements are outside inputsHash")
	}
}

// TestVersions: the version says whether a lock holds more than jars;
// a newer one is refused with a clear message, even with fields this
// prebake does not know.
func TestVersions(t *testing.T) {
	data, err := os.ReadFile(pythonGolden)
	if err != nil {
		t.Fatal(err)
	}
	jars := sample()
	jars.Normalize()
	jdata, _ := jars.Marshal()
	for _, tc := range []struct{ name, data, want string }{
		{"python lock as version 1", strings.Replace(string(data), `"version": 2`, `"version": 1`, 1), "a lock with wheels or inputs.python is version 2"},
		{"jar lock as version 2", strings.Replace(string(jdata), `"version": 1`, `"version": 2`, 1), "a lock with jars only is version 1"},
		{"version 3", strings.Replace(string(data), `"version": 2`, `"version": 3`, 1), "version 3 is newer than this prebake reads (versions 1 to 2): upgrade prebake"},
		{"version 3 with new fields", strings.Replace(string(data), `"version": 2`, `"sboms": [], "version": 3`, 1), "version 3 is newer than this prebake reads"},
		{"version 0", strings.Replace(string(jdata), `"version": 1`, `"version": 0`, 1), "unsupported version 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.lock", []byte(tc.data))
			if !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.lock") {
				t.Errorf("Parse: %v, want invalid input naming x.lock and %q", err, tc.want)
			}
		})
	}
}

// TestWheelEntriesRefused: hostile or inconsistent wheel entries are bad
// input (65) naming the field.
func TestWheelEntriesRefused(t *testing.T) {
	const numpy = "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	for _, tc := range []struct {
		name   string
		edit   func(l *File)
		field  string
		secret string // must not appear in the message
	}{
		{"unknown kind", func(l *File) { l.Artifacts[0].Kind = "egg" }, "kind", ""},
		{"name not normalized", func(l *File) { l.Artifacts[0].Name = "NumPy" }, "name", ""},
		{"name not the file's", func(l *File) { l.Artifacts[0].Name = "scipy" }, "name", ""},
		{"name empty", func(l *File) { l.Artifacts[0].Name = "" }, "name", ""},
		{"file with a slash", func(l *File) { l.Artifacts[0].File = "x/" + numpy }, "file", ""},
		{"file with a backslash", func(l *File) { l.Artifacts[0].File = `x\` + numpy }, "file", ""},
		{"file dot dot", func(l *File) { l.Artifacts[0].File = ".." }, "file", ""},
		{"file not a wheel", func(l *File) { l.Artifacts[0].File = "numpy-1.26.4.tar.gz" }, "file", ""},
		{"file too few fields", func(l *File) { l.Artifacts[0].File = "numpy-1.26.4-cp311.whl" }, "file", ""},
		{"file bad build tag", func(l *File) { l.Artifacts[0].File = "numpy-1.26.4-x1-cp311-cp311-any.whl" }, "build tag", ""},
		{"file bad tag", func(l *File) { l.Artifacts[0].File = "numpy-1.26.4-cp 311-cp311-any.whl" }, "file", ""},
		{"version not PEP 440", func(l *File) { l.Artifacts[0].Version = "1.26.4;rm" }, "version", ""},
		{"version not the file's", func(l *File) { l.Artifacts[0].Version = "1.26.5" }, "version", ""},
		{"sha256 short", func(l *File) { l.Artifacts[0].Sha256 = "abc" }, "sha256", ""},
		{"sha256 not hex", func(l *File) { l.Artifacts[0].Sha256 = strings.Repeat("x", 64) }, "sha256", ""},
		{"size negative", func(l *File) { l.Artifacts[0].Size = -1 }, "size", ""},
		{"repository with userinfo", func(l *File) { l.Artifacts[0].Repository = "https://bob:hunter2@pypi.example/simple/" }, "repository", "hunter2"},
		{"repository not http", func(l *File) { l.Artifacts[0].Repository = "ftp://pypi.example/" }, "repository", ""},
		{"repository empty", func(l *File) { l.Artifacts[0].Repository = "" }, "repository", ""},
		{"wheel with coord", func(l *File) { l.Artifacts[0].Coord = "g:a:1" }, "coord", ""},
		{"wheel signed", func(l *File) { l.Artifacts[0].SignedBy = strings.Repeat("A", 40) }, "signedBy", ""},
		{"jar with wheel fields", func(l *File) { l.Artifacts[1].Name = "slf4j" }, "name and version", ""},
		{"same file across kinds", func(l *File) { l.Artifacts[1].File = numpy }, "appears twice", ""},
		{"same project twice", func(l *File) {
			w := l.Artifacts[0]
			w.File = "numpy-1.26.4-cp311-cp311-any.whl"
			l.Artifacts = append(l.Artifacts, w)
		}, "name", ""},
		{"no python inputs", func(l *File) { l.Inputs.Python = nil }, "inputs.python", ""},
		{"python version", func(l *File) { l.Inputs.Python.Version = "3" }, "inputs.python.version", ""},
		{"no platforms", func(l *File) { l.Inputs.Python.Platforms = nil }, "inputs.python.platforms", ""},
		{"platform tag", func(l *File) { l.Inputs.Python.Platforms = []string{"linux/x86"} }, "inputs.python.platforms", ""},
		{"requirement control char", func(l *File) { l.Inputs.Python.Requirements = []string{"six\n"} }, "inputs.python.requirements", ""},
		{"index with userinfo", func(l *File) { l.Inputs.Python.Indexes = []string{"https://u:s3cret@x.example/simple/"} }, "inputs.python.indexes", "s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := readPython(t)
			tc.edit(l)
			l.LockHash, l.Inputs.InputsHash = "", ComputeInputsHash(l.Inputs)
			data, err := l.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse("py.lock", data)
			if !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "py.lock") {
				t.Fatalf("Parse: %v, want invalid input naming py.lock and %q", err, tc.field)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("the message shows the secret: %v", err)
			}
			// Write refuses what Parse refuses.
			if err := Write(filepath.Join(t.TempDir(), "py.lock"), l); err == nil {
				t.Error("Write wrote it")
			}
		})
	}
}

func TestWheelNames(t *testing.T) {
	for in, want := range map[string]string{"Typing_Extensions": "typing-extensions", "zope.interface": "zope-interface", "a-_.b": "a-b", "six": "six"} {
		if got := NormalizeProject(in); got != want {
			t.Errorf("NormalizeProject(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPythonRoundTrip: a version 2 lock written by Write reads back equal
// and byte for byte.
func TestPythonRoundTrip(t *testing.T) {
	l := readPython(t)
	path := filepath.Join(t.TempDir(), "prebake.lock")
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(pythonGolden)
	b, _ := os.ReadFile(path)
	if !bytes.Equal(a, b) {
		t.Errorf("written:\n%s\nwant:\n%s", b, a)
	}
}
