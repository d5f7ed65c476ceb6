package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/internal/sbom"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
)

// ErrLockDiffers is matched (errors.Is) when Import would replace an
// existing lock with another one (see LockDiffersError).
var ErrLockDiffers = errors.New("the bundle's lock differs from the existing lock")

// LockDiffersError is Import's refusal to replace the lock at Path with
// the bundle's (errdefs.Invalid: the bundle is not the set that was
// pinned). Diff is the difference from the existing lock to the bundle's
// (nil when the existing lock cannot be read: Reason says why); Signers
// lists the jars whose recorded signer differs.
type LockDiffersError struct {
	Path    string
	Bundle  string
	Diff    *lockdiff.Diff
	Signers []string
	Reason  string
}

func (e *LockDiffersError) Error() string {
	var what string
	switch {
	case e.Reason != "":
		what = e.Reason
	case e.Diff != nil && !e.Diff.Equal:
		var parts []string
		if red := e.Diff.ContentChanged(); len(red) > 0 {
			var names []string
			for _, m := range red {
				names = append(names, m.New.File)
			}
			parts = append(parts, "other bytes under the same version for "+strings.Join(names, ", "))
		}
		if n := len(e.Diff.Modules); n > 0 {
			parts = append(parts, fmt.Sprintf("%d modules differ", n))
		}
		if e.Diff.InputsChanged {
			parts = append(parts, "the inputs differ")
		}
		what = strings.Join(parts, "; ")
	case len(e.Signers) > 0:
		what = "another signer recorded for " + strings.Join(e.Signers, ", ")
	default:
		what = "the same jars, another lock file"
	}
	return fmt.Sprintf("%v: %s was not replaced by the lock of bundle %s (%s)", ErrLockDiffers, e.Path, e.Bundle, what)
}

func (e *LockDiffersError) Unwrap() error { return ErrLockDiffers }

// CheckReplace checks that the lock file at path, if there is one, is the
// same as lf, the lock of bundle `from`: the same inputs, jars (coordinate,
// file, repository, sha256, size) and signers. A missing file is fine; one
// that differs, or cannot be read or parsed, is a *LockDiffersError
// (errdefs.Invalid).
func CheckReplace(path string, lf *lock.File, from string) error {
	data, err := localfile.Read(path, lock.MaxSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	refuse := func(e *LockDiffersError) error {
		e.Path, e.Bundle = path, from
		return errdefs.New(errdefs.Invalid, e)
	}
	if err != nil {
		return refuse(&LockDiffersError{Reason: fmt.Sprintf("it cannot be read: %v", err)})
	}
	old, err := lock.Parse(path, data)
	if err != nil {
		return refuse(&LockDiffersError{Reason: fmt.Sprintf("it is not a lock prebake reads: %v", err)})
	}
	if same(old, lf) {
		return nil
	}
	d, err := lockdiff.Compare(path, old, from, lf)
	if err != nil {
		return refuse(&LockDiffersError{Reason: err.Error()})
	}
	e := &LockDiffersError{Diff: d}
	signers := map[string]string{}
	for _, a := range old.Artifacts {
		signers[a.File+"\x00"+a.Sha256] = a.SignedBy
	}
	for _, a := range lf.Artifacts {
		if s, ok := signers[a.File+"\x00"+a.Sha256]; ok && s != a.SignedBy {
			e.Signers = append(e.Signers, fmt.Sprintf("%s (%s → %s)", a.File, orNone(s), orNone(a.SignedBy)))
		}
	}
	return refuse(e)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// same reports whether two locks are the same file, as prebake writes it.
func same(a, b *lock.File) bool {
	a2, b2 := *a, *b
	a2.Artifacts, b2.Artifacts = slices.Clone(a.Artifacts), slices.Clone(b.Artifacts) // Normalize sorts them
	a2.Normalize()
	b2.Normalize()
	da, err1 := a2.Marshal()
	db, err2 := b2.Marshal()
	return err1 == nil && err2 == nil && bytes.Equal(da, db)
}

// checkSBOM checks the bundle's SBOM against its lock: it must be the
// SBOM of that lock (sbom.New), all but the time and tool it was made
// with. A lying SBOM (other components, hashes, inputs) is ErrBadBundle.
func checkSBOM(name string, data []byte, lf *lock.File) error {
	var got sbom.BOM
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		return bad(name, "%s: %v", SBOMName, err)
	}
	if dec.More() {
		return bad(name, "%s: data after the JSON object", SBOMName)
	}
	want, err := sbom.New(lf)
	if err != nil {
		return bad(name, "%s: %v", LockName, err)
	}
	if len(got.Components) != len(want.Components) {
		return bad(name, "%s: %d components, the lock has %d jars", SBOMName, len(got.Components), len(want.Components))
	}
	for i, c := range want.Components {
		if !sameJSON(got.Components[i], c) {
			return bad(name, "%s: components[%d] (%s) is not the lock's %s (sha256 %s)", SBOMName, i, coordpart.Quote(got.Components[i].PURL), c.PURL, lf.Artifacts[i].Sha256)
		}
	}
	got.Metadata.Timestamp, got.Metadata.Tools = want.Metadata.Timestamp, want.Metadata.Tools
	if !sameJSON(got.Metadata, want.Metadata) {
		return bad(name, "%s: metadata (lock hash, inputs) is not the lock's", SBOMName)
	}
	if got.SerialNumber != want.SerialNumber || got.BOMFormat != want.BOMFormat || got.SpecVersion != want.SpecVersion || got.Schema != want.Schema || got.Version != want.Version {
		return bad(name, "%s: serialNumber, format or version is not the lock's SBOM's", SBOMName)
	}
	return nil
}

// sameJSON reports whether a and b have the same JSON form.
func sameJSON(a, b any) bool {
	da, err1 := json.Marshal(a)
	db, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(da, db)
}

// sigsOption names WithSignatures in errors (the CLI hints at its flags).
const sigsOption = "resolver.Request.Signatures"

// checkSigners checks, before anything is written, that every jar of lf
// records a signer that v pins and that the bundle carries its signature.
func checkSigners(name string, v resolver.SignatureVerifier, lf *lock.File, ix *Index) error {
	carried := map[string]bool{}
	for _, e := range ix.sigs() {
		carried[e.Path] = true
	}
	for _, a := range lf.Jars() { // wheels carry no signature
		switch {
		case a.SignedBy == "":
			return errdefs.Optionf(errdefs.Invalid, sigsOption, "bundle %s: jar %s (%s): %v: the bundle's lock records no signer", name, a.File, a.Coord, ErrSignatureMissing)
		case !v.Has(a.SignedBy):
			return errdefs.Optionf(errdefs.Invalid, sigsOption, "bundle %s: jar %s (%s): the lock says it is signed by %s, which is not a pinned key", name, a.File, a.Coord, a.SignedBy)
		case !carried[sigPath(a.File)]:
			return errdefs.Optionf(errdefs.Invalid, sigsOption, "bundle %s: jar %s (%s): %v: the bundle carries no %s", name, a.File, a.Coord, ErrSignatureMissing, sigPath(a.File))
		}
	}
	return nil
}

// verifySignatures verifies each jar's signature (sigs, by file) over its
// staged blob (by sha256): it must be made by the key the lock records.
func verifySignatures(name string, v resolver.SignatureVerifier, lf *lock.File, blobs map[string]string, sigs map[string][]byte) error {
	for _, a := range lf.Jars() {
		f, err := os.Open(blobs[a.Sha256])
		if err != nil {
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("bundle %s: jar %s: %w", name, a.File, err))
		}
		fp, err := v.Verify(f, sigs[a.File], time.Time{})
		f.Close()
		if err != nil {
			return errdefs.Optionf(errdefs.Invalid, sigsOption, "bundle %s: jar %s (%s): signature %s: %w", name, a.File, a.Coord, sigPath(a.File), err)
		}
		if fp != a.SignedBy {
			return errdefs.Optionf(errdefs.Invalid, sigsOption, "bundle %s: jar %s (%s): signed by %s, the lock records %s", name, a.File, a.Coord, fp, a.SignedBy)
		}
	}
	return nil
}
