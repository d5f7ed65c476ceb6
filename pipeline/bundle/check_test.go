package bundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
	"github.com/prebake/prebake/lock"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/repo"
)

// TestImportChecksSBOM: an SBOM that is not the lock's is refused, even
// with the index fixed (audit 4, 20-lying-sbom.tar).
func TestImportChecksSBOM(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "ok.tar")
	export(t, f, src)
	for _, c := range []struct {
		name, sbom, want string
	}{
		{"another SBOM", `{"bomFormat":"CycloneDX","components":[{"name":"totally-fine"}]}`, "1 components, the lock has 2 jars"},
		{"not JSON", `<bom/>`, "sbom.cdx.json: invalid character"},
		{"an unknown field", `{"evil": 1}`, `unknown field "evil"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			es := readTar(t, src)
			fixFile(t, es, 2, []byte(c.sbom))
			path := filepath.Join(t.TempDir(), "bad.tar")
			writeTar(t, path, es, nil)
			cache := t.TempDir()
			_, err := Import(context.Background(), path, cache)
			if errdefs.KindOf(err) != errdefs.Invalid || !errors.Is(err, ErrBadBundle) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want 65 with %q", err, c.want)
			}
			if n := count(t, filepath.Join(cache, "blobs", "sha256")); n != 0 {
				t.Errorf("%d blobs written", n)
			}
		})
	}
	// One hash changed in an otherwise true SBOM.
	es := readTar(t, src)
	fixFile(t, es, 2, bytes.Replace(es[2].data, []byte(f.lock.Artifacts[0].Sha256), []byte(strings.Repeat("0", 64)), 1))
	path := filepath.Join(t.TempDir(), "bad.tar")
	writeTar(t, path, es, nil)
	if _, err := Import(context.Background(), path, t.TempDir()); err == nil || !strings.Contains(err.Error(), "components[0]") {
		t.Errorf("a changed hash: %v", err)
	}
}

// fixFile replaces the i-th file of a tar and its sha256 and size in the
// index.
func fixFile(t *testing.T, es []entry, i int, data []byte) {
	t.Helper()
	ix, err := ParseIndex("t", es[0].data, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ix.Files[i-1] = entryOf(ix.Files[i-1].Path, data)
	es[i].data = data
	es[0].data = marshalIndex(t, ix)
}

func marshalIndex(t *testing.T, ix *Index) []byte {
	t.Helper()
	c := &contents{index: ix}
	data, err := jsonIndent(c.index)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestImportExistingLock: an existing lock is replaced only by the same
// lock, or with WithForce; what differs is in the error, and nothing is
// written.
func TestImportExistingLock(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "ok.tar")
	export(t, f, src)
	dir := t.TempDir()
	same, err := f.lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	other := *f.lock
	other.Artifacts = append([]lock.Artifact{}, f.lock.Artifacts...)
	other.Artifacts[1].Sha256 = strings.Repeat("1", 64)
	other.LockHash = other.Hash()
	otherData, _ := other.Marshal()
	signed := *f.lock
	signed.Artifacts = append([]lock.Artifact{}, f.lock.Artifacts...)
	signed.Artifacts[0].SignedBy = strings.Repeat("A", 40)
	signedData, _ := signed.Marshal()
	for _, c := range []struct {
		name   string
		data   []byte // nil: no file
		force  bool
		want   string // "" : accepted
		signer bool
	}{
		{"no lock", nil, false, "", false},
		{"the same lock", same, false, "", false},
		{"another jar", otherData, false, "other bytes under the same version for com.example_a-1.0.jar", false},
		{"another jar, forced", otherData, true, "", false},
		{"another signer", signedData, false, "another signer recorded for com.example_b-1.0.jar (AAAA", true},
		{"garbage", []byte("{"), false, "is not a lock prebake reads", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".lock")
			if c.data != nil {
				os.WriteFile(path, c.data, 0o644)
			}
			cache := t.TempDir()
			_, err := Import(context.Background(), src, cache, WithExistingLock(path), WithForce(c.force))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ld *LockDiffersError
			if !strings.Contains(got, c.want) || !strings.Contains(got, path+" was not replaced") || errdefs.KindOf(err) != errdefs.Invalid || !errors.As(err, &ld) {
				t.Errorf("%v, want 65 with %q", err, c.want)
			}
			if n := count(t, filepath.Join(cache, "blobs", "sha256")); n != 0 {
				t.Errorf("%d blobs written", n)
			}
		})
	}
}

// signedFixture is newFixture with every jar signed by key and its
// signature cached in cache.
func signedFixture(t *testing.T, key *pgptest.Key, cache string) fixture {
	t.Helper()
	f := newFixture(t)
	for i, a := range f.lock.Artifacts {
		data, err := os.ReadFile(f.paths[i])
		if err != nil {
			t.Fatal(err)
		}
		p := repo.SignaturePath(cache, a.Sha256)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, key.Sign(t, data), 0o644); err != nil {
			t.Fatal(err)
		}
		f.lock.Artifacts[i].SignedBy = key.Fingerprint()
	}
	return f
}

// TestSignaturesCarried: a signed lock's signatures go into the bundle
// (tar and OCI) and, on import, where a verified run reads them; with
// WithSignatures a signature by another key, a missing one or an unpinned
// signer is refused naming the jar, and nothing is written.
func TestSignaturesCarried(t *testing.T) {
	key, other := pgptest.NewKey(t, "pinned"), pgptest.NewKey(t, "other")
	kr, err := pgpverify.ParseKeyring("k", key.Public(t))
	if err != nil {
		t.Fatal(err)
	}
	near := t.TempDir()
	f := signedFixture(t, key, near)
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "s.tar")
	exp := func(to string) *ExportResult {
		res, err := Export(context.Background(), f.lock, f.paths, to, WithEpoch(time.Unix(1, 0)), WithCacheDir(near))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := exp(tarPath); res.Signatures != 2 {
		t.Errorf("export: %d signatures", res.Signatures)
	}
	oci := exp("oci:" + filepath.Join(dir, "layout"))
	for _, from := range []string{tarPath, oci.To} {
		far := t.TempDir()
		res, err := Import(context.Background(), from, far, WithSignatures(kr))
		if err != nil || res.Signatures != 2 {
			t.Fatalf("import %s: %v", from, err)
		}
		for _, a := range f.lock.Artifacts {
			want, _ := os.ReadFile(repo.SignaturePath(near, a.Sha256))
			if got, err := os.ReadFile(repo.SignaturePath(far, a.Sha256)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("import %s: the signature of %s is not cached: %v", from, a.File, err)
			}
		}
	}
	// A signature missing from the cache: export refuses (66).
	os.Remove(repo.SignaturePath(near, f.lock.Artifacts[0].Sha256))
	if _, err := Export(context.Background(), f.lock, f.paths, filepath.Join(dir, "x.tar"), WithCacheDir(near)); errdefs.KindOf(err) != errdefs.NotFound || !errors.Is(err, ErrSignatureMissing) {
		t.Errorf("export with a signature missing: %v", err)
	}

	sigA := len(readTar(t, tarPath)) - 2 // signatures/com.example_a-1.0.jar.asc
	jarA := 3
	for _, c := range []struct {
		name   string
		tamper func([]entry) []entry
		opts   []Option
		want   string
	}{
		{"signed by another key", func(es []entry) []entry {
			fixFile(t, es, sigA, other.Sign(t, es[jarA].data))
			return es
		}, []Option{WithSignatures(kr)}, "jar com.example_a-1.0.jar (com.example:a:1.0): signature signatures/com.example_a-1.0.jar.asc: signed by a key that is not in the keyring"},
		{"over other bytes", func(es []entry) []entry {
			fixFile(t, es, sigA, key.Sign(t, []byte("x")))
			return es
		}, []Option{WithSignatures(kr)}, "jar com.example_a-1.0.jar (com.example:a:1.0): signature signatures/com.example_a-1.0.jar.asc: bad signature"},
		{"missing", func(es []entry) []entry {
			ix, _ := ParseIndex("t", es[0].data, DefaultLimits)
			ix.Files = append(ix.Files[:sigA-1], ix.Files[sigA:]...)
			es[0].data = marshalIndex(t, ix)
			return append(es[:sigA], es[sigA+1:]...)
		}, []Option{WithSignatures(kr)}, "jar com.example_a-1.0.jar (com.example:a:1.0): no signature: the bundle carries no signatures/com.example_a-1.0.jar.asc"},
		{"the signer not pinned", func(es []entry) []entry { return es }, []Option{WithSignatures(mustKeyring(t, other))}, "which is not a pinned key"},
		{"a signature of no jar", func(es []entry) []entry {
			ix, _ := ParseIndex("t", es[0].data, DefaultLimits)
			ix.Files = append(ix.Files, entryOf("signatures/z.jar.asc", []byte("x")))
			es[0].data = marshalIndex(t, ix)
			hdr := es[sigA].hdr
			hdr.Name = "signatures/z.jar.asc"
			return append(es, entry{hdr: hdr, data: []byte("x")})
		}, nil, "signatures/z.jar.asc is not the signature of a jar"},
		{"a jar after the signatures", func(es []entry) []entry {
			ix, _ := ParseIndex("t", es[0].data, DefaultLimits)
			ix.Files = append(ix.Files, entryOf("jars/z.jar", []byte("x")))
			es[0].data = marshalIndex(t, ix)
			return es
		}, nil, "after the signatures"},
	} {
		t.Run(c.name, func(t *testing.T) {
			es := readTar(t, tarPath)
			for i := range es {
				es[i].data = bytes.Clone(es[i].data)
			}
			es = c.tamper(es)
			path := filepath.Join(t.TempDir(), "bad.tar")
			writeTar(t, path, es, nil)
			cache := t.TempDir()
			_, err := Import(context.Background(), path, cache, c.opts...)
			if errdefs.KindOf(err) != errdefs.Invalid || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want 65 with %q", err, c.want)
			}
			if n := count(t, filepath.Join(cache, "blobs", "sha256")) + count(t, filepath.Join(cache, "signatures", "sha256")) + count(t, filepath.Join(cache, "tmp")); n != 0 {
				t.Errorf("%d files left", n)
			}
		})
	}
}

func mustKeyring(t *testing.T, keys ...*pgptest.Key) *pgpverify.Keyring {
	t.Helper()
	var data []byte
	for _, k := range keys {
		data = append(data, k.Public(t)...)
	}
	kr, err := pgpverify.ParseKeyring("k", data)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// TestTruncatedSaidOnce: a tar cut inside a jar is refused with the
// bundle and the file named once (audit 4, L6).
func TestTruncatedSaidOnce(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "ok.tar")
	export(t, f, src)
	data, _ := os.ReadFile(src)
	cut := filepath.Join(t.TempDir(), "cut.tar")
	os.WriteFile(cut, data[:len(data)-3000], 0o644)
	_, err := Import(context.Background(), cut, t.TempDir())
	if err == nil || strings.Count(err.Error(), "bad bundle") != 1 || strings.Count(err.Error(), "jars/") != 1 || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("truncated: %v", err)
	}
}

// TestStagingSwept: an import killed with SIGKILL leaves its staging
// directory; the next import removes it (its lock is free), and keeps
// the one of an import that still runs, and one just made (younger than
// stagingGrace: its import may not hold its lock yet).
func TestStagingSwept(t *testing.T) {
	cache := t.TempDir()
	tmp := filepath.Join(blobcache.Dir(cache), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, stagingPrefix+"dead")
	os.MkdirAll(filepath.Join(dead, "tmp"), 0o700)
	os.WriteFile(filepath.Join(dead, stagingLock), nil, 0o600)
	os.WriteFile(filepath.Join(dead, "tmp", "dl-1"), make([]byte, 1<<20), 0o600)
	aMinuteAgo := time.Now().Add(-time.Minute)
	os.Chtimes(dead, aMinuteAgo, aMinuteAgo)
	// One just made, its lock file created but not yet flocked (the gap
	// in lockStaging): kept, as younger than stagingGrace.
	fresh := filepath.Join(tmp, stagingPrefix+"fresh")
	os.MkdirAll(fresh, 0o700)
	os.WriteFile(filepath.Join(fresh, stagingLock), nil, 0o600)
	// A live one: its lock held by another process (flock, as an import
	// holds it).
	live := filepath.Join(tmp, stagingPrefix+"live")
	os.MkdirAll(live, 0o700)
	os.WriteFile(filepath.Join(live, stagingLock), nil, 0o600)
	holder := exec.Command("flock", filepath.Join(live, stagingLock), "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	defer func() { holder.Process.Signal(syscall.SIGKILL); holder.Wait() }()
	// Without a lock file: by age.
	young, old := filepath.Join(tmp, stagingPrefix+"young"), filepath.Join(tmp, stagingPrefix+"old")
	os.MkdirAll(young, 0o700)
	os.MkdirAll(old, 0o700)
	os.Chtimes(old, time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour))
	deadline := time.Now().Add(10 * time.Second)
	for !stagingHeld(filepath.Join(live, stagingLock)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "ok.tar")
	export(t, f, src)
	if _, err := Import(context.Background(), src, cache); err != nil {
		t.Fatal(err)
	}
	var left []string
	es, _ := os.ReadDir(tmp)
	for _, e := range es {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{stagingPrefix + "fresh", stagingPrefix + "live", stagingPrefix + "young"}, left); diff != "" {
		t.Errorf("tmp after an import (-want +got):\n%s", diff)
	}
}

func stagingHeld(path string) bool {
	free, known := stagingFree(path)
	return known && !free
}
