package pgpverify_test

import (
	"bytes"
	"crypto"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
)

func TestVerify(t *testing.T) {
	now := time.Now()
	pinned := pgptest.NewKey(t, "pinned")
	other := pgptest.NewKey(t, "other")
	// Valid for a day, two days ago: it expired yesterday.
	expiring := pgptest.NewKeyAt(t, "expiring", now.Add(-48*time.Hour), 24*time.Hour)
	// Revoked an hour ago (retired, not compromised), expired or not.
	revoked := pgptest.NewKeyAt(t, "revoked", now.Add(-48*time.Hour), 0)
	revoked.Revoke(t, now.Add(-time.Hour), packet.KeyRetired)
	revokedExpired := pgptest.NewKeyAt(t, "revoked-expired", now.Add(-48*time.Hour), 24*time.Hour)
	revokedExpired.Revoke(t, now.Add(-time.Hour), packet.KeyRetired)
	keys := append(append(pinned.Public(t), []byte("some text between blocks\n")...), expiring.Public(t)...)
	keys = append(append(keys, revoked.Public(t)...), revokedExpired.Public(t)...)
	kr, err := pgpverify.ParseKeyring("test", keys)
	if err != nil {
		t.Fatal(err)
	}
	// A key of 2010, for signatures of before SHA1Cutoff.
	old := pgptest.NewKeyAt(t, "old", time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC), 0)
	keys = append(keys, old.Public(t)...)
	if kr, err = pgpverify.ParseKeyring("test", keys); err != nil {
		t.Fatal(err)
	}
	jar := []byte("PK\x03\x04 a jar")
	tests := []struct {
		name    string
		sig     []byte
		data    []byte
		wantFP  string
		wantErr error
	}{
		{"good", pinned.Sign(t, jar), jar, pinned.Fingerprint(), nil},
		{"bad: another file's signature", pinned.Sign(t, []byte("other bytes")), jar, "", pgpverify.ErrBad},
		{"bad: garbage", []byte("-----BEGIN PGP SIGNATURE-----\n\nnot base64\n-----END PGP SIGNATURE-----\n"), jar, "", pgpverify.ErrBad},
		{"bad: empty", nil, jar, "", pgpverify.ErrSignature},
		{"wrong key", other.Sign(t, jar), jar, "", pgpverify.ErrUnknownKey},
		{"expired when it signed", expiring.SignAt(t, jar, now.Add(-time.Hour)), jar, "", pgpverify.ErrExpired},
		{"expired since it signed: accepted", expiring.SignAt(t, jar, now.Add(-47*time.Hour)), jar, expiring.Fingerprint(), nil},
		{"dated before its key was made", expiring.SignAt(t, jar, now.Add(-49*time.Hour)), jar, "", pgpverify.ErrBad},
		{"dated in 2000, key of now", pinned.SignAt(t, jar, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)), jar, "", pgpverify.ErrBad},
		{"SHA-1, dated now", pinned.SignHash(t, jar, now, crypto.SHA1), jar, "", pgpverify.ErrBad},
		{"SHA-1, dated on the cut-off", old.SignHash(t, jar, pgpverify.SHA1Cutoff, crypto.SHA1), jar, "", pgpverify.ErrBad},
		{"SHA-1, dated before the cut-off: accepted", old.SignHash(t, jar, pgpverify.SHA1Cutoff.Add(-time.Second), crypto.SHA1), jar, old.Fingerprint(), nil},
		{"SHA-512: accepted", pinned.SignHash(t, jar, now, crypto.SHA512), jar, pinned.Fingerprint(), nil},
		{"revoked, signed before the revocation", revoked.SignAt(t, jar, now.Add(-2*time.Hour)), jar, "", pgpverify.ErrExpired},
		{"revoked and expired, signed while valid", revokedExpired.SignAt(t, jar, now.Add(-47*time.Hour)), jar, "", pgpverify.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, err := kr.Verify(bytes.NewReader(tt.data), tt.sig, now)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
			} else if !errors.Is(err, tt.wantErr) || !errors.Is(err, pgpverify.ErrSignature) {
				t.Fatalf("Verify error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantFP, fp); diff != "" {
				t.Errorf("fingerprint (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeyring(t *testing.T) {
	a, b := pgptest.NewKey(t, "a"), pgptest.NewKey(t, "b")
	dir := t.TempDir()
	p := filepath.Join(dir, "keys.asc")
	if err := os.WriteFile(p, append(a.Public(t), b.Public(t)...), 0o644); err != nil {
		t.Fatal(err)
	}
	kr, err := pgpverify.ReadKeyring(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range kr.Keys() {
		got = append(got, k.Fingerprint)
	}
	want := []string{a.Fingerprint(), b.Fingerprint()}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if !kr.Has(a.Fingerprint()) || kr.Has("00"+a.Fingerprint()[2:]) {
		t.Errorf("Has is wrong")
	}
	// Round trip through Armored, merged with itself: the same two keys.
	var buf bytes.Buffer
	if err := kr.Merge(kr).Armored(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := pgpverify.ParseKeyring("again", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kr.Keys(), again.Keys()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	// A KEYS file with an unreadable block among good ones: the good ones, the bad counted.
	bad := []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!\n-----END PGP PUBLIC KEY BLOCK-----\n")
	mixed, err := pgpverify.ParseKeyring("KEYS", append(append(a.Public(t), bad...), b.Public(t)...))
	if err != nil || len(mixed.Keys()) != 2 || mixed.Skipped != 1 {
		t.Errorf("mixed KEYS: %v, %d keys, %d skipped", err, len(mixed.Keys()), mixed.Skipped)
	}
	for name, data := range map[string][]byte{"empty": nil, "text": []byte("no key here"), "bad armor": bad} {
		if _, err := pgpverify.ParseKeyring(name, data); !errors.Is(err, errdefs.Invalid) {
			t.Errorf("%s: err = %v, want errdefs.Invalid", name, err)
		}
	}
	if _, err := pgpverify.ReadKeyring(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing keyring: %v", err)
	}
}
