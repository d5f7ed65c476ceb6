package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
)

// fixture is a lock of two jars on disk.
type fixture struct {
	lock  *lock.File
	paths []string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{lock: &lock.File{Inputs: lock.Inputs{Packages: []string{"com.example:b:1.0"}, Conflict: lock.ConflictLatest,
		Repositories: []string{"http://127.0.0.1:1/repo/"}}}}
	// Not in file order: Export sorts, paths follow the lock's order.
	for _, name := range []string{"b", "a"} {
		data := []byte("PK\x03\x04 fake jar " + name + strings.Repeat("x", 3000))
		s := sha256.Sum256(data)
		p := filepath.Join(dir, name+".jar")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f.lock.Artifacts = append(f.lock.Artifacts, lock.Artifact{Coord: "com.example:" + name + ":1.0", File: "com.example_" + name + "-1.0.jar",
			Sha256: hex.EncodeToString(s[:]), Size: int64(len(data)), Repository: "http://127.0.0.1:1/repo/"})
		f.paths = append(f.paths, p)
	}
	// Not Normalize: that would sort the artifacts away from paths.
	f.lock.Version = lock.SchemaVersion
	f.lock.Inputs.Excludes = []string{}
	f.lock.Inputs.InputsHash = lock.ComputeInputsHash(f.lock.Inputs)
	f.lock.LockHash = f.lock.Hash()
	return f
}

func export(t *testing.T, f fixture, to string) *ExportResult {
	t.Helper()
	res, err := Export(context.Background(), f.lock, f.paths, to, WithEpoch(layers.DefaultEpoch), WithToolVersion("test"))
	if err != nil {
		t.Fatalf("export %s: %v", to, err)
	}
	return res
}

// TestExportReproducible: the same lock and jars give the same bytes and
// digest twice, in each form; Import then fills a cache with the jars
// (their cache paths, in lock order).
func TestExportReproducible(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	a := export(t, f, filepath.Join(dir, "a.tar"))
	b := export(t, f, filepath.Join(dir, "b.tar"))
	da, _ := os.ReadFile(filepath.Join(dir, "a.tar"))
	db, _ := os.ReadFile(filepath.Join(dir, "b.tar"))
	if a.Digest != b.Digest || !bytes.Equal(da, db) {
		t.Errorf("two exports differ: %s %s", a.Digest, b.Digest)
	}
	if s := sha256.Sum256(da); a.Digest != "sha256:"+hex.EncodeToString(s[:]) {
		t.Errorf("digest %s is not the tar's sha256", a.Digest)
	}
	o1 := export(t, f, "oci:"+filepath.Join(dir, "l1"))
	o2 := export(t, f, "oci:"+filepath.Join(dir, "l2")+":other")
	if o1.Digest != o2.Digest || !strings.HasPrefix(o1.Digest, "sha256:") {
		t.Errorf("two OCI exports differ: %s %s", o1.Digest, o2.Digest)
	}
	if want := f.lock.Hash(); a.LockHash != want || a.Jars != 2 {
		t.Errorf("export result %+v, lock hash %s", a, want)
	}
	for _, from := range []string{filepath.Join(dir, "a.tar"), o1.To, "oci:" + filepath.Join(dir, "l2") + ":other"} {
		cache := t.TempDir()
		res, err := Import(context.Background(), from, cache)
		if err != nil {
			t.Fatalf("import %s: %v", from, err)
		}
		var want []string
		for _, art := range f.lock.Artifacts {
			want = append(want, blobcache.BlobPath(cache, art.Sha256))
		}
		if diff := cmp.Diff(want, res.Paths); diff != "" {
			t.Errorf("import %s paths (-want +got):\n%s", from, diff)
		}
		for i, p := range res.Paths {
			if err := blobcache.VerifyBlob(cache, f.lock.Artifacts[i].Sha256, f.lock.Artifacts[i].Size); err != nil {
				t.Errorf("import %s: %s: %v", from, p, err)
			}
		}
		if res.LockHash != f.lock.Hash() || res.Lock.Hash() != f.lock.Hash() {
			t.Errorf("import %s: lock hash %s", from, res.LockHash)
		}
		// --frozen --offline reads these blobs: nothing is fetched.
		paths, err := resolver.FetchLocked(context.Background(), res.Lock, resolver.Request{CacheDir: cache, Offline: true})
		if err != nil || len(paths) != 2 {
			t.Errorf("import %s: offline FetchLocked: %v", from, err)
		}
	}
}

// entry is one file of a tar, for tampering.
type entry struct {
	hdr  tar.Header
	data []byte
}

func readTar(t *testing.T, path string) []entry {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tr := tar.NewReader(fh)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out = append(out, entry{hdr: *h, data: data})
	}
}

func writeTar(t *testing.T, path string, es []entry, trailer []byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := e.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.data)
	}
	tw.Close()
	buf.Write(trailer)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sumHex(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }

// TestImportRefusesTampered: each tampered tar is refused as bad input
// (65) naming the file or field, and the cache holds no blob afterwards.
func TestImportRefusesTampered(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "ok.tar")
	export(t, f, src)
	jarA := "jars/com.example_a-1.0.jar"
	// setIndex replaces text in index.json; setLock in prebake.lock, and
	// fixes the index's sha256 and size of the lock.
	setIndex := func(es []entry, old, new string) {
		es[0].data = []byte(strings.Replace(string(es[0].data), old, new, 1))
	}
	setLock := func(es []entry, old, new string) {
		was := es[1].data
		es[1].data = []byte(strings.Replace(string(was), old, new, 1))
		setIndex(es, sumHex(was), sumHex(es[1].data))
		setIndex(es, `"size": `+strconv.Itoa(len(was)), `"size": `+strconv.Itoa(len(es[1].data)))
	}
	cases := []struct {
		name    string
		tamper  func([]entry) []entry
		trailer []byte
		want    string // in the message
	}{
		{"a jar byte", func(es []entry) []entry { es[3].data[10] ^= 1; return es }, nil, jarA},
		{"the lock's repository", func(es []entry) []entry {
			es[1].data = bytes.Replace(es[1].data, []byte("127.0.0.1:1"), []byte("127.0.0.1:2"), 1)
			return es
		}, nil, "prebake.lock: sha256"},
		{"the lock's sha256 of a jar, index fixed", func(es []entry) []entry {
			setLock(es, f.lock.Artifacts[1].Sha256, strings.Repeat("0", 64))
			return es
		}, nil, "lockHash"},
		{"an unknown lock field", func(es []entry) []entry { setLock(es, `"artifacts"`, `"signed": true, "artifacts"`); return es }, nil, `unknown field "signed"`},
		{"an extra file at the end", func(es []entry) []entry {
			return append(es, entry{hdr: tar.Header{Name: "jars/evil.jar", Typeflag: tar.TypeReg, Mode: 0o644}, data: []byte("x")})
		}, nil, `extra file "jars/evil.jar"`},
		{"an extra file inside", func(es []entry) []entry {
			return append(es[:3], append([]entry{{hdr: tar.Header{Name: "README", Typeflag: tar.TypeReg, Mode: 0o644}, data: []byte("x")}}, es[3:]...)...)
		}, nil, `unexpected file "README"`},
		{"a path escaping the root", func(es []entry) []entry { es[3].hdr.Name = "../" + jarA; return es }, nil, `unexpected file "../jars/com.example_a-1.0.jar"`},
		{"an index path escaping the root", func(es []entry) []entry {
			setIndex(es, `"`+jarA+`"`, `"jars/../../etc/passwd"`)
			return es
		}, nil, "files[2].path"},
		{"a symbolic link", func(es []entry) []entry {
			es[3] = entry{hdr: tar.Header{Name: jarA, Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}
			return es
		}, nil, jarA + " is not a regular file"},
		{"a jar bigger than the index says", func(es []entry) []entry { es[3].data = append(es[3].data, 'x'); return es }, nil, jarA + " has 3016 bytes, the index says 3015"},
		{"bytes after the end", func(es []entry) []entry { return es }, []byte("trailing garbage"), "bigger than its index says"},
		{"a missing jar", func(es []entry) []entry { return es[:4] }, nil, "jars/com.example_b-1.0.jar is missing"},
		{"an unknown index field", func(es []entry) []entry { setIndex(es, `"version"`, `"extra": 1, "version"`); return es }, nil, `unknown field "extra"`},
		{"a bad index sha256", func(es []entry) []entry { setIndex(es, f.lock.Artifacts[1].Sha256, "XYZ"); return es }, nil, `files[2].sha256 "XYZ"`},
		{"an index size over the bound", func(es []entry) []entry {
			setIndex(es, `"size": 3015`, `"size": 99999999999999`)
			return es
		}, nil, "files[2].size"},
		{"index version 2", func(es []entry) []entry { setIndex(es, `"version": 1`, `"version": 2`); return es }, nil, "version 2"},
		{"the index first", func(es []entry) []entry { es[0], es[1] = es[1], es[0]; return es }, nil, `unexpected file "prebake.lock" (the index says index.json`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := readTar(t, src)
			for i := range es {
				es[i].data = bytes.Clone(es[i].data)
			}
			path := filepath.Join(t.TempDir(), "bad.tar")
			writeTar(t, path, c.tamper(es), c.trailer)
			cache := t.TempDir()
			_, err := Import(context.Background(), path, cache)
			type outcome struct {
				Kind     errdefs.Kind
				Bad      bool
				Names    bool
				Blobs    int
				TempLeft int
			}
			got := outcome{Kind: errdefs.KindOf(err), Bad: errors.Is(err, ErrBadBundle), Names: err != nil && strings.Contains(err.Error(), c.want),
				Blobs: count(t, filepath.Join(cache, "blobs", "sha256")), TempLeft: count(t, filepath.Join(cache, "tmp"))}
			if diff := cmp.Diff(outcome{Kind: errdefs.Invalid, Bad: true, Names: true}, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nerror: %v", diff, err)
			}
			if testing.Verbose() {
				t.Logf("%v", err)
			}
		})
	}
}

// TestImportLimits: a bundle over its bounds is refused naming the bound.
func TestImportLimits(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "ok.tar")
	export(t, f, src)
	for _, c := range []struct {
		lim  Limits
		want string
	}{
		{Limits{Entries: 1, File: 1 << 20, Total: 1 << 30}, "2 jars and wheels, more than 1"},
		{Limits{Entries: 10, File: 100, Total: 1 << 30}, "files[2].size 3015 is not within 0..100"},
		{Limits{Entries: 10, File: 1 << 20, Total: 5000}, "add up to more than 5000"},
	} {
		_, err := Import(context.Background(), src, t.TempDir(), WithLimits(c.lim))
		if errdefs.KindOf(err) != errdefs.Invalid || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.lim, err, c.want)
		}
	}
}

// TestImportOCITampered: a layout whose jar blob was changed is refused
// naming the jar; a manifest whose blobs do not match the index is
// refused naming the blob.
func TestImportOCITampered(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "layout")
	res := export(t, f, "oci:"+dir)
	blob := filepath.Join(dir, "blobs", "sha256", f.lock.Artifacts[1].Sha256)
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	data[5] ^= 1
	os.Chmod(blob, 0o644)
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	_, err = Import(context.Background(), res.To, cache)
	if errdefs.KindOf(err) != errdefs.Invalid || !errors.Is(err, ErrBadBundle) || !strings.Contains(err.Error(), "jars/com.example_a-1.0.jar") {
		t.Errorf("tampered blob: %v", err)
	}
	if n := count(t, filepath.Join(cache, "blobs", "sha256")); n != 0 {
		t.Errorf("%d blobs written", n)
	}

	ix := &Index{Version: 1, Files: []Entry{{Path: LockName, Sha256: strings.Repeat("a", 64)}, {Path: SBOMName, Sha256: strings.Repeat("b", 64)}}}
	blobs := func(titles ...string) []layers.ArtifactBlob {
		var out []layers.ArtifactBlob
		for i, ti := range titles {
			out = append(out, layers.ArtifactBlob{Title: ti, MediaType: mediaType(i, ti), Sha256: strings.Repeat(string(rune('a'+i)), 64)})
		}
		return out
	}
	for _, c := range []struct {
		blobs []layers.ArtifactBlob
		want  string
	}{
		{blobs(LockName, SBOMName), ""},
		{blobs(LockName, SBOMName, "jars/x.jar"), `extra blob "jars/x.jar"`},
		{blobs(LockName), "sbom.cdx.json is missing"},
		{blobs(SBOMName, LockName), `blob 0 is "sbom.cdx.json"`},
	} {
		err := (&artifactSource{name: "r", a: &layers.PulledArtifact{Blobs: c.blobs}}).check(ix)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (c.want == "") != (err == nil) || !strings.Contains(got, c.want) {
			t.Errorf("%v: %v, want %q", c.blobs, err, c.want)
		}
	}
}

func count(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
