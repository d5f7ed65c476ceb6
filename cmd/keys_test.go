package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
	"github.com/prebake/prebake/lock"
)

// signRepo writes <jar>.asc next to every jar of a file:// repository,
// made by sign.
func signRepo(t *testing.T, repoURL string, sign func(jar []byte) []byte) {
	t.Helper()
	root := strings.TrimPrefix(repoURL, "file://")
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(p, ".jar") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p+".asc", sign(data), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The journey: pin a key with prebake keys, lock with --verify-signatures
// (from prebake.yaml), re-check frozen and offline, refuse a bad signature
// naming the jar.
func TestVerifySignaturesCLI(t *testing.T) {
	_, tmp := isolatedCLI(t)
	signer, stranger := pgptest.NewKey(t, "signer"), pgptest.NewKey(t, "stranger")
	repo := s3FileRepo(t)
	signRepo(t, repo, func(jar []byte) []byte { return signer.Sign(t, jar) })
	keyFile := filepath.Join(tmp, "signer.asc")
	both := append(signer.Public(t), stranger.Public(t)...)
	if err := os.WriteFile(keyFile, both, 0o644); err != nil {
		t.Fatal(err)
	}
	keyring := filepath.Join(tmp, "keyring.asc")

	// keys add --fingerprint pins only the signer of the two keys given.
	out, stderr, code := runCLI(t, "keys", "add", "--keyring", keyring, "--fingerprint", strings.ToLower(signer.Fingerprint()), keyFile)
	if code != 0 || !strings.Contains(out, signer.Fingerprint()) || strings.Contains(out, stranger.Fingerprint()) {
		t.Fatalf("keys add: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "keys", "list", "--keyring", keyring, "-o", "json")
	var listed jsondoc.Keys
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Keys) != 1 || listed.Keys[0].Fingerprint != signer.Fingerprint() {
		t.Fatalf("keys list: exit %d\n%s%s", code, out, stderr)
	}
	if _, _, code := runCLI(t, "keys", "add", "--keyring", keyring, "--fingerprint", strings.Repeat("0", 40), keyFile); code != exitcode.NotFound {
		t.Errorf("keys add of an absent fingerprint: exit %d, want 66", code)
	}

	// prebake.yaml turns verification on.
	cfg := filepath.Join(tmp, "prebake.yaml")
	if err := os.WriteFile(cfg, []byte("verifySignatures: true\nkeyring: "+keyring+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache, lockPath := filepath.Join(tmp, "cache"), filepath.Join(tmp, "prebake.lock")
	base := []string{"--config", cfg, "--no-default-repositories", "--repositories", repo, "--cache", cache, "--lock", lockPath}
	_, stderr, code = runCLI(t, append([]string{"resolve", "-o", "names"}, append(base, "com.example:lib-a:1.0")...)...)
	if code != 0 {
		t.Fatalf("resolve --verify-signatures: exit %d\n%s", code, stderr)
	}
	lf, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range lf.Artifacts {
		if a.SignedBy != signer.Fingerprint() {
			t.Errorf("%s signedBy %q, want %s", a.File, a.SignedBy, signer.Fingerprint())
		}
	}
	// Frozen and offline, the repository's signatures gone: from the cache.
	signRepo(t, repo, func([]byte) []byte { return []byte("garbage") })
	if _, stderr, code := runCLI(t, append([]string{"resolve", "--frozen", "--offline"}, append(base, "com.example:lib-a:1.0")...)...); code != 0 {
		t.Errorf("frozen offline re-check: exit %d\n%s", code, stderr)
	}
	// The signer unpinned: 65, naming the jar.
	other := filepath.Join(tmp, "other.asc")
	if err := os.WriteFile(other, stranger.Public(t), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, append([]string{"resolve", "--frozen", "--keyring", other}, append(base, "com.example:lib-a:1.0")...)...)
	if code != exitcode.DataErr || !strings.Contains(stderr, "com.example_lib-") || !strings.Contains(stderr, "not in the keyring") {
		t.Errorf("frozen, signer unpinned: exit %d, want 65 naming the jar\n%s", code, stderr)
	}
	// bake s3 from the lock alone checks the jars it fetches the same way.
	_, stderr, code = runCLI(t, "bake", "s3", "--store", "file://"+filepath.Join(tmp, "store"), "--lock", lockPath, "--verify-signatures",
		"--keyring", other, "--cache", filepath.Join(tmp, "cache3"), "--repositories", repo)
	if code != exitcode.DataErr || !strings.Contains(stderr, "not in the keyring") {
		t.Errorf("bake s3 --lock, signer unpinned: exit %d, want 65\n%s", code, stderr)
	}
	// A fresh resolution against the garbage signatures: 65, no lock written.
	lock2 := filepath.Join(tmp, "fresh.lock")
	_, stderr, code = runCLI(t, "resolve", "--verify-signatures", "--keyring", keyring, "--no-default-repositories", "--repositories", repo,
		"--cache", filepath.Join(tmp, "cache2"), "--lock", lock2, "com.example:lib-a:1.0")
	if code != exitcode.DataErr || !strings.Contains(stderr, "com.example_lib-") || !strings.Contains(stderr, "bad signature") {
		t.Errorf("bad signature: exit %d, want 65 naming the jar\n%s", code, stderr)
	}
	if _, err := os.Stat(lock2); err == nil {
		t.Error("a lock was written for a set whose signatures failed")
	}
	// No keyring: 66 naming it.
	_, stderr, code = runCLI(t, "resolve", "--verify-signatures", "--keyring", filepath.Join(tmp, "none.asc"), "--no-default-repositories", "--repositories", repo, "--cache", cache, "com.example:lib-a:1.0")
	if code != exitcode.NotFound || !strings.Contains(stderr, "none.asc") {
		t.Errorf("missing keyring: exit %d, want 66\n%s", code, stderr)
	}
}

// keys list marks a revoked key and an expired one (audit 4, L4).
func TestKeysListMarks(t *testing.T) {
	_, tmp := isolatedCLI(t)
	now := time.Now()
	good := pgptest.NewKey(t, "good")
	revoked := pgptest.NewKey(t, "revoked")
	revoked.Revoke(t, now, packet.KeyRetired)
	expired := pgptest.NewKeyAt(t, "expired", now.Add(-48*time.Hour), 24*time.Hour)
	keyring := filepath.Join(tmp, "keyring.asc")
	if err := os.WriteFile(keyring, append(append(good.Public(t), revoked.Public(t)...), expired.Public(t)...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "keys", "list", "--keyring", keyring)
	if code != 0 {
		t.Fatalf("keys list: exit %d\n%s%s", code, out, stderr)
	}
	marks := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fp, _, _ := strings.Cut(line, " ")
		switch {
		case strings.Contains(line, " REVOKED"):
			marks[fp] = "revoked"
		case strings.Contains(line, " EXPIRED "):
			marks[fp] = "expired"
		default:
			marks[fp] = ""
		}
	}
	want := map[string]string{good.Fingerprint(): "", revoked.Fingerprint(): "revoked", expired.Fingerprint(): "expired"}
	if diff := cmp.Diff(want, marks); diff != "" {
		t.Errorf("marks (-want +got):\n%s\n%s", diff, out)
	}
	out, _, _ = runCLI(t, "keys", "list", "--keyring", keyring, "-o", "json")
	var listed jsondoc.Keys
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatal(err)
	}
	for _, k := range listed.Keys {
		if k.Revoked != (k.Fingerprint == revoked.Fingerprint()) {
			t.Errorf("json: %s revoked = %v", k.Fingerprint, k.Revoked)
		}
	}
}
