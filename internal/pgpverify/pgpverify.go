// Package pgpverify checks the detached OpenPGP signatures (.asc) Maven
// Central requires next to every artifact, against a keyring the user pins.
// It is the one package that imports the OpenPGP library
// (github.com/ProtonMail/go-crypto).
//
// A keyring is a file of public keys, armored (several blocks, with any
// text between them, as an Apache KEYS file) or binary. A signature is
// good when it verifies over the file with a key of the keyring that was
// valid (not expired, not revoked) when the signature was made: Central's
// artifacts outlive their signers' key expiry dates, as Gradle and Maven's
// verifiers accept. The signer is named by its primary key's fingerprint,
// 40 upper-case hex digits (64 for a v6 key).
package pgpverify

import (
	"bytes"
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
)

// MaxKeyringSize bounds a keyring file (16 MiB: the Apache KEYS files of
// the largest projects are under 1 MiB).
const MaxKeyringSize = 16 << 20

// MaxSignatureSize bounds a signature file (64 KiB; a real one is under 1 KiB).
const MaxSignatureSize = 64 << 10

// The ways a signature fails; every error of Verify matches ErrSignature
// and one of the others (errors.Is).
var (
	ErrSignature  = errors.New("signature check failed")
	ErrBad        = errors.New("bad signature")                              // does not verify over the file, or is malformed
	ErrUnknownKey = errors.New("signed by a key that is not in the keyring") // the issuer is not pinned
	ErrExpired    = errors.New("signed after the key expired or was revoked")
)

type failure struct {
	why    error
	detail string
}

func (f *failure) Error() string {
	if f.detail == "" {
		return f.why.Error()
	}
	return f.why.Error() + ": " + f.detail
}

func (f *failure) Is(target error) bool { return target == ErrSignature || target == f.why }

// Keyring is a set of pinned public keys.
type Keyring struct {
	entities openpgp.EntityList
	// Skipped counts the armored key blocks ParseKeyring could not read
	// (an old or unsupported key among readable ones).
	Skipped int
}

// Key describes one key of a keyring.
type Key struct {
	Fingerprint string    `json:"fingerprint"`
	UserIDs     []string  `json:"userIds"`
	Created     time.Time `json:"created"`
	// Expires is the zero time for a key that does not expire.
	Expires time.Time `json:"expires,omitzero"`
	// Revoked is set for a key that carries a revocation of itself: its
	// signatures are refused, whatever their date.
	Revoked bool `json:"revoked,omitempty"`
}

// ReadKeyring reads a keyring file (at most MaxKeyringSize bytes).
// A missing file is errdefs.NotFound; one with no key is errdefs.Invalid.
func ReadKeyring(path string) (*Keyring, error) {
	data, err := localfile.Read(path, MaxKeyringSize)
	if err != nil {
		return nil, fmt.Errorf("keyring %w", err)
	}
	return ParseKeyring(path, data)
}

const armorBegin = "-----BEGIN PGP PUBLIC KEY BLOCK-----"

// ParseKeyring parses keys, armored (every public key block of data, text
// between blocks ignored; a block that cannot be read is skipped and
// counted in Skipped, unless none can) or binary. name is used in errors.
func ParseKeyring(name string, data []byte) (*Keyring, error) {
	var el openpgp.EntityList
	var skipped []string
	if bytes.Contains(data, []byte(armorBegin)) {
		rest := data
		for {
			i := bytes.Index(rest, []byte(armorBegin))
			if i < 0 {
				break
			}
			rest = rest[i:]
			block, err := armor.Decode(bytes.NewReader(rest))
			var ents openpgp.EntityList
			if err == nil {
				ents, err = openpgp.ReadKeyRing(block.Body)
			}
			if err != nil {
				// A KEYS file holds keys of every age (v3, retired
				// algorithms): one block the library cannot read is
				// skipped and counted, as long as another one is read.
				skipped = append(skipped, err.Error())
			}
			el = append(el, ents...)
			rest = rest[len(armorBegin):]
		}
	} else {
		ents, err := openpgp.ReadKeyRing(bytes.NewReader(data))
		if err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "keyring %s: %v", name, err)
		}
		el = ents
	}
	if len(el) == 0 {
		if len(skipped) > 0 {
			return nil, errdefs.Errorf(errdefs.Invalid, "keyring %s: no readable public key in it (%d blocks unreadable, the first: %s)", name, len(skipped), skipped[0])
		}
		return nil, errdefs.Errorf(errdefs.Invalid, "keyring %s: no public key in it", name)
	}
	// Only public material is kept: a keyring pins, it never signs.
	k := &Keyring{Skipped: len(skipped)}
	seen := map[string]bool{}
	for _, e := range el {
		fp := Fingerprint(e.PrimaryKey.Fingerprint)
		if seen[fp] {
			continue
		}
		seen[fp] = true
		e.PrivateKey = nil
		for i := range e.Subkeys {
			e.Subkeys[i].PrivateKey = nil
		}
		k.entities = append(k.entities, e)
	}
	return k, nil
}

// Merge returns a keyring with the keys of k and of o (o's copy of a key
// that both hold is ignored).
func (k *Keyring) Merge(o *Keyring) *Keyring {
	out := &Keyring{entities: slices.Clone(k.entities)}
	have := map[string]bool{}
	for _, e := range k.entities {
		have[Fingerprint(e.PrimaryKey.Fingerprint)] = true
	}
	for _, e := range o.entities {
		if fp := Fingerprint(e.PrimaryKey.Fingerprint); !have[fp] {
			have[fp] = true
			out.entities = append(out.entities, e)
		}
	}
	return out
}

// Keys lists the keyring, sorted by fingerprint.
func (k *Keyring) Keys() []Key {
	var out []Key
	for _, e := range k.entities {
		key := Key{Fingerprint: Fingerprint(e.PrimaryKey.Fingerprint), Created: e.PrimaryKey.CreationTime.UTC(), Revoked: e.Revoked(time.Now())}
		for name, id := range e.Identities {
			key.UserIDs = append(key.UserIDs, name)
			if id.SelfSignature != nil && id.SelfSignature.KeyLifetimeSecs != nil && *id.SelfSignature.KeyLifetimeSecs > 0 {
				key.Expires = e.PrimaryKey.CreationTime.Add(time.Duration(*id.SelfSignature.KeyLifetimeSecs) * time.Second).UTC()
			}
		}
		slices.Sort(key.UserIDs)
		out = append(out, key)
	}
	slices.SortFunc(out, func(a, b Key) int { return strings.Compare(a.Fingerprint, b.Fingerprint) })
	return out
}

// Has reports whether fingerprint (any case, spaces ignored) is a primary
// key of the keyring.
func (k *Keyring) Has(fingerprint string) bool {
	fp := NormalizeFingerprint(fingerprint)
	for _, e := range k.entities {
		if Fingerprint(e.PrimaryKey.Fingerprint) == fp {
			return true
		}
	}
	return false
}

// Armored writes the keyring's public keys as one armored block.
func (k *Keyring) Armored(w io.Writer) error {
	aw, err := armor.Encode(w, openpgp.PublicKeyType, nil)
	if err != nil {
		return err
	}
	for _, e := range k.entities {
		if err := e.Serialize(aw); err != nil {
			return err
		}
	}
	if err := aw.Close(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// Fingerprint formats a key fingerprint as upper-case hex.
func Fingerprint(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

// NormalizeFingerprint upper-cases fp and drops spaces and a 0x prefix.
func NormalizeFingerprint(fp string) string {
	fp = strings.ReplaceAll(strings.TrimSpace(fp), " ", "")
	fp = strings.TrimPrefix(strings.TrimPrefix(fp, "0x"), "0X")
	return strings.ToUpper(fp)
}

// CheckFingerprint checks that fp is a fingerprint as Fingerprint writes
// it: 40 or 64 upper-case hex digits.
func CheckFingerprint(fp string) error {
	if len(fp) != 40 && len(fp) != 64 {
		return fmt.Errorf("fingerprint %q is not 40 or 64 hex digits", fp)
	}
	if strings.ToUpper(fp) != fp {
		return fmt.Errorf("fingerprint %q is not upper-case hex", fp)
	}
	if _, err := hex.DecodeString(fp); err != nil {
		return fmt.Errorf("fingerprint %q is not hex", fp)
	}
	return nil
}

// Verify checks sig (armored or binary, a detached signature) over signed
// (streamed; read twice for a key that has expired since),
// and returns the primary fingerprint of the key that made it. now is the
// time of the check (the zero time: time.Now). A key that expired after
// the signature was made is accepted (the signature's date is the
// signer's claim: see docs/design.md, "Signature times"); one that had
// expired when it signed, or that is revoked now, is ErrExpired. A
// signature dated before its key was made, or a SHA-1 one dated from
// SHA1Cutoff on, is ErrBad. The error matches ErrSignature.
func (k *Keyring) Verify(signed io.ReadSeeker, sig []byte, now time.Time) (string, error) {
	if len(sig) > MaxSignatureSize {
		return "", &failure{ErrBad, fmt.Sprintf("signature is %d bytes, more than %d", len(sig), MaxSignatureSize)}
	}
	body := sig
	if bytes.Contains(sig, []byte("-----BEGIN PGP SIGNATURE-----")) {
		block, err := armor.Decode(bytes.NewReader(sig))
		if err != nil {
			return "", &failure{ErrBad, err.Error()}
		}
		if block.Type != openpgp.SignatureType {
			return "", &failure{ErrBad, "armored block is " + block.Type + ", not a signature"}
		}
		if body, err = io.ReadAll(io.LimitReader(block.Body, MaxSignatureSize)); err != nil {
			return "", &failure{ErrBad, err.Error()}
		}
	}
	if now.IsZero() {
		now = time.Now()
	}
	cfg := &packet.Config{Time: func() time.Time { return now }}
	s, signer, err := openpgp.VerifyDetachedSignature(k.entities, signed, bytes.NewReader(body), cfg)
	if s != nil && signer != nil {
		// It verifies over the file: what it claims is checked first,
		// before the library's view of the key at its claimed time.
		if cerr := checkClaims(s, signer, now); cerr != nil {
			return "", cerr
		}
	}
	if errors.Is(err, pgperrors.ErrKeyExpired) && s != nil {
		// Expired now: was it valid when it signed? The file is hashed
		// again (streamed, never held in memory).
		if _, serr := signed.Seek(0, io.SeekStart); serr != nil {
			return "", serr
		}
		at := s.CreationTime
		cfg := &packet.Config{Time: func() time.Time { return at }}
		// checkClaims above refused a key revoked now, whatever the
		// signature claims (this second check looks at revocations as
		// of the signature's own time).
		_, signer, err = openpgp.VerifyDetachedSignature(k.entities, signed, bytes.NewReader(body), cfg)
	}
	switch {
	case err == nil:
		return Fingerprint(signer.PrimaryKey.Fingerprint), nil
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return "", &failure{ErrUnknownKey, "issuer " + issuer(body)}
	case errors.Is(err, pgperrors.ErrKeyExpired), errors.Is(err, pgperrors.ErrKeyRevoked), errors.Is(err, pgperrors.ErrSignatureExpired):
		who := issuer(body)
		if signer != nil {
			who = Fingerprint(signer.PrimaryKey.Fingerprint)
		}
		return "", &failure{ErrExpired, "key " + who + ": " + err.Error()}
	}
	return "", &failure{ErrBad, err.Error()}
}

// SHA1Cutoff is the time from which a SHA-1 signature is refused: SHA-1
// stopped being collision resistant enough for new signatures (the
// cut-off of Sequoia-PGP's standard policy). Before it, no one could make
// the colliding pair of files a SHA-1 signature could be moved between, so
// the older signatures of Central's artifacts stay good. The date is the
// signature's own claim, but the one who gains from a collision is not
// the signer: the signer writes the date, honestly, into what it hashes.
var SHA1Cutoff = time.Date(2013, 2, 1, 0, 0, 0, 0, time.UTC)

// checkClaims refuses what the library accepts in a signature that
// verifies: a creation time before the signing key's own (the signer
// backdated it past its key's birth), and a SHA-1 digest dated from
// SHA1Cutoff on (MD5 and RIPEMD-160 the library refuses itself).
func checkClaims(s *packet.Signature, signer *openpgp.Entity, now time.Time) error {
	fp := Fingerprint(signer.PrimaryKey.Fingerprint)
	created := signer.PrimaryKey.CreationTime
	if s.IssuerKeyId != nil {
		for _, sk := range signer.Subkeys {
			if sk.PublicKey != nil && sk.PublicKey.KeyId == *s.IssuerKeyId {
				created = sk.PublicKey.CreationTime
			}
		}
	}
	if s.CreationTime.Before(created) {
		return &failure{ErrBad, fmt.Sprintf("key %s: the signature is dated %s, before its key was made (%s)",
			fp, s.CreationTime.UTC().Format(time.RFC3339), created.UTC().Format(time.RFC3339))}
	}
	if s.Hash == crypto.SHA1 && !s.CreationTime.Before(SHA1Cutoff) {
		return &failure{ErrBad, fmt.Sprintf("key %s: the signature uses SHA-1, refused for signatures dated from %s (this one: %s)",
			fp, SHA1Cutoff.Format("2006-01-02"), s.CreationTime.UTC().Format("2006-01-02"))}
	}
	if revokedAt(signer, s.IssuerKeyId, now) {
		return &failure{ErrExpired, "key " + fp + ": revoked"}
	}
	return nil
}

// revokedAt reports whether e's primary key, or its subkey with the ID
// *id, holds a revocation in force at now.
func revokedAt(e *openpgp.Entity, id *uint64, now time.Time) bool {
	if e.Revoked(now) {
		return true
	}
	for i := range e.Subkeys {
		if id != nil && e.Subkeys[i].PublicKey != nil && e.Subkeys[i].PublicKey.KeyId == *id && e.Subkeys[i].Revoked(now) {
			return true
		}
	}
	return false
}

// issuer names the key a binary signature says made it: the issuer
// fingerprint when the signature carries one, else the 16-digit key ID.
func issuer(body []byte) string {
	p, err := packet.NewReader(bytes.NewReader(body)).Next()
	if err != nil {
		return "(unreadable)"
	}
	s, ok := p.(*packet.Signature)
	switch {
	case !ok:
		return "(not a signature)"
	case s.IssuerFingerprint != nil:
		return Fingerprint(s.IssuerFingerprint)
	case s.IssuerKeyId != nil:
		return fmt.Sprintf("key ID %016X", *s.IssuerKeyId)
	}
	return "(none)"
}

// Issuer returns the fingerprint (or key ID) a signature names as its
// issuer, without verifying it: to tell a user which key to pin.
func Issuer(sig []byte) string {
	body := sig
	if block, err := armor.Decode(bytes.NewReader(sig)); err == nil {
		if b, err := io.ReadAll(io.LimitReader(block.Body, MaxSignatureSize)); err == nil {
			body = b
		}
	}
	return issuer(body)
}

// Only returns the keys of k whose primary fingerprints are fps (any case,
// spaces ignored); a fingerprint k does not hold is errdefs.NotFound.
func (k *Keyring) Only(fps []string) (*Keyring, error) {
	out := &Keyring{}
	for _, fp := range fps {
		want := NormalizeFingerprint(fp)
		i := slices.IndexFunc(k.entities, func(e *openpgp.Entity) bool { return Fingerprint(e.PrimaryKey.Fingerprint) == want })
		if i < 0 {
			return nil, errdefs.Errorf(errdefs.NotFound, "key %s is not among the keys given", want)
		}
		out.entities = append(out.entities, k.entities[i])
	}
	return out, nil
}
