package repo

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// pinnedOnly is a SignatureVerifier that holds the given fingerprints.
type pinnedOnly map[string]bool

func (p pinnedOnly) Verify(io.ReadSeeker, []byte, time.Time) (string, error) {
	return "", errors.New("not used")
}
func (p pinnedOnly) Has(fp string) bool { return p[fp] }

// A frozen lock's check names every signer the keyring lacks, grouped by
// key, in one error; a lock with no signer is stale, as before.
func TestCheckSignersAllAtOnce(t *testing.T) {
	arts := []lock.Artifact{
		{File: "a.jar", Coord: "g:a:1", SignedBy: "AAAA"},
		{File: "b.jar", Coord: "g:b:1", SignedBy: "PINNED"},
		{File: "c.jar", Coord: "g:c:1", SignedBy: "CCCC"},
		{File: "d.jar", Coord: "g:d:1", SignedBy: "AAAA"},
	}
	err := CheckSigners(pinnedOnly{"PINNED": true}, arts)
	var se *SignaturesError
	if !errors.As(err, &se) || errdefs.KindOf(err) != errdefs.Invalid || errdefs.OptionOf(err) != signaturesOption {
		t.Fatalf("CheckSigners: %v (kind %v, option %q)", err, errdefs.KindOf(err), errdefs.OptionOf(err))
	}
	want := []UnknownSigner{
		{Issuer: "AAAA", Files: []string{"a.jar (g:a:1)", "d.jar (g:d:1)"}},
		{Issuer: "CCCC", Files: []string{"c.jar (g:c:1)"}},
	}
	if diff := cmp.Diff(want, se.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if err := CheckSigners(pinnedOnly{"AAAA": true, "PINNED": true, "CCCC": true}, arts); err != nil {
		t.Errorf("all pinned: %v", err)
	}
	arts[2].SignedBy = ""
	if err := CheckSigners(pinnedOnly{}, arts); errdefs.KindOf(err) != errdefs.Stale || !errors.Is(err, ErrSignatureMissing) {
		t.Errorf("a lock with no signer: %v, want stale", err)
	}
}
