// Package pgptest makes OpenPGP keys and detached signatures for tests:
// a signer for a local repository's .asc files, and its public key to pin.
package pgptest

import (
	"bytes"
	"crypto"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/prebake/prebake/internal/pgpverify"
)

// Key is a test signing key.
type Key struct {
	e *openpgp.Entity
}

// NewKey makes an Ed25519 key for name, created now, that never expires.
func NewKey(t testing.TB, name string) *Key {
	t.Helper()
	return NewKeyAt(t, name, time.Now(), 0)
}

// NewKeyAt makes a key created at created, expiring after lifetime (0: never).
func NewKeyAt(t testing.TB, name string, created time.Time, lifetime time.Duration) *Key {
	t.Helper()
	cfg := &packet.Config{
		Algorithm:       packet.PubKeyAlgoEdDSA,
		Time:            func() time.Time { return created },
		KeyLifetimeSecs: uint32(lifetime / time.Second),
	}
	e, err := openpgp.NewEntity(name, "test", name+"@example.test", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{e: e}
}

// Fingerprint is the key's primary fingerprint, as pgpverify names signers.
func (k *Key) Fingerprint() string { return pgpverify.Fingerprint(k.e.PrimaryKey.Fingerprint) }

// Public is the armored public key.
func (k *Key) Public(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// Sign returns an armored detached signature of data, made now.
func (k *Key) Sign(t testing.TB, data []byte) []byte {
	t.Helper()
	return k.SignAt(t, data, time.Now())
}

// SignAt returns an armored detached signature of data made at at by the
// primary key, whether or not the key was valid then (an expired key's
// signature, for the verifier to refuse).
func (k *Key) SignAt(t testing.TB, data []byte, at time.Time) []byte {
	t.Helper()
	return k.SignHash(t, data, at, crypto.SHA256)
}

// SignHash is SignAt with the digest algorithm hash (crypto.SHA1: a
// weak-digest signature, for the verifier to refuse). The claimed time at
// may be anything, before the key's creation too.
func (k *Key) SignHash(t testing.TB, data []byte, at time.Time, hash crypto.Hash) []byte {
	t.Helper()
	pk := k.e.PrimaryKey
	id := pk.KeyId
	cfg := &packet.Config{Time: func() time.Time { return at }}
	if hash == crypto.SHA1 {
		// The salt notation has no length for SHA-1 (gpg adds none).
		no := false
		cfg.NonDeterministicSignaturesViaNotation = &no
	}
	sig := &packet.Signature{
		Version: pk.Version, SigType: packet.SigTypeBinary, PubKeyAlgo: pk.PubKeyAlgo, Hash: hash,
		CreationTime: at, IssuerKeyId: &id, IssuerFingerprint: pk.Fingerprint,
	}
	h, err := sig.PrepareSign(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(data)
	if err := sig.Sign(h, k.e.PrivateKey, cfg); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.SignatureType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sig.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// Revoke adds a revocation of the key, made at at with reason (as
// packet.KeyRetired), to the key Public then returns.
func (k *Key) Revoke(t testing.TB, at time.Time, reason packet.ReasonForRevocation) {
	t.Helper()
	if err := k.e.RevokeKey(reason, "test", &packet.Config{Time: func() time.Time { return at }}); err != nil {
		t.Fatal(err)
	}
}
