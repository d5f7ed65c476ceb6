package resolver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/resolver/repo"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
	"github.com/prebake/prebake/internal/testenv"
)

// TestCentralSignaturesIT fetches the real .asc of a few jars from the
// machine's Maven Central and checks who signed them against the issuers
// pinned in testdata. Without their public keys (central-keys.asc) the
// signatures are refused as signed by an unpinned key, naming that issuer;
// with them, they must verify and the lock records the pinned fingerprint.
func TestCentralSignaturesIT(t *testing.T) {
	testenv.RequireIT(t)
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		t.Fatal(err)
	}
	var pinned struct {
		Signers []struct{ Coord, File, Issuer string }
	}
	data, err := os.ReadFile(filepath.Join("testdata", "signatures", "central-signers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pinned); err != nil {
		t.Fatal(err)
	}
	kr := keyringOf(t, pgptest.NewKey(t, "nobody"))
	haveKeys := false
	if keys, err := pgpverify.ReadKeyring(filepath.Join("testdata", "signatures", "central-keys.asc")); err == nil {
		kr, haveKeys = keys, true
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, s := range pinned.Signers {
		t.Run(s.Coord, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			req := Request{
				Packages: []string{s.Coord}, Repositories: []string{central}, NoDefaultRepositories: true,
				CacheDir: filepath.Join(dir, "cache"), LockPath: filepath.Join(dir, "prebake.lock"), Signatures: kr,
			}
			res, err := Resolve(ctx, req)
			if haveKeys && kr.Has(s.Issuer) {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				for _, a := range res.Lock.Artifacts {
					if a.File == s.File && a.SignedBy != s.Issuer {
						t.Errorf("%s signedBy %s, want %s", a.File, a.SignedBy, s.Issuer)
					}
				}
				return
			}
			if !errors.Is(err, pgpverify.ErrUnknownKey) || errdefs.KindOf(err) != errdefs.Invalid ||
				!strings.Contains(err.Error(), s.File) || !strings.Contains(err.Error(), s.Issuer) {
				t.Fatalf("Resolve: %v (exit %d); want 65: %s signed by the unpinned %s", err, errdefs.KindOf(err), s.File, s.Issuer)
			}
			t.Logf("real signature fetched; issuer %s as pinned; its public key is not in testdata, so the signature itself is not verified", s.Issuer)
		})
	}
}
