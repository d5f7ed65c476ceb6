package sitepkgs

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"

	"github.com/prebake/prebake/errdefs"
)

// verifier hashes an entry's bytes as they are copied.
type verifier struct {
	hash.Hash
	e Entry
}

func newVerifier(e Entry) *verifier { return &verifier{Hash: sha256.New(), e: e} }

// check reports an entry whose n bytes read are not the installed ones.
func (v *verifier) check(n int64) error {
	if got := hex.EncodeToString(v.Sum(nil)); n != v.e.Size || got != v.e.Sha256 {
		return errdefs.Errorf(errdefs.Invalid, "%s (from %s): the staged file changed: %d bytes, sha256 %s; installed %d bytes, sha256 %s", v.e.Path, v.e.Wheel, n, got, v.e.Size, v.e.Sha256)
	}
	return nil
}
