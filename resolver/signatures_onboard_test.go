package resolver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
	"github.com/prebake/prebake/resolver/repo"
)

// Onboarding: one run names every key that is not pinned (not only the
// first), and a bad signature is told apart from an unknown key: it names
// no option (the CLI's "pin a signer" hint), since pinning cannot fix it.
func TestSignatureFailuresAllAtOnce(t *testing.T) {
	pinned := pgptest.NewKey(t, "pinned")
	alice := pgptest.NewKey(t, "alice")
	bob := pgptest.NewKey(t, "bob")
	kr := keyringOf(t, pinned)
	bySigner := func(app, lib func(t *testing.T, jar []byte) []byte) func(t *testing.T, jar []byte) []byte {
		return func(t *testing.T, jar []byte) []byte {
			if strings.Contains(string(jar), "lib-1.0") {
				return lib(t, jar)
			}
			return app(t, jar)
		}
	}
	resolve := func(t *testing.T, sign func(t *testing.T, jar []byte) []byte) error {
		t.Helper()
		r := signedRepo(t, sign)
		dir := t.TempDir()
		req := Request{
			Packages: []string{"org.s:app:1.0"}, Repositories: []string{"file://" + r.Dir}, NoDefaultRepositories: true,
			LockPath: filepath.Join(dir, "prebake.lock"), CacheDir: filepath.Join(dir, "cache"), Signatures: kr,
		}
		_, err := Resolve(context.Background(), req, fastOpts()...)
		return err
	}

	t.Run("two unknown keys", func(t *testing.T) {
		err := resolve(t, bySigner(
			func(t *testing.T, jar []byte) []byte { return alice.Sign(t, jar) },
			func(t *testing.T, jar []byte) []byte { return bob.Sign(t, jar) }))
		t.Log(err)
		var se *repo.SignaturesError
		if !errors.As(err, &se) || !errors.Is(err, pgpverify.ErrUnknownKey) || errdefs.KindOf(err) != errdefs.Invalid {
			t.Fatalf("Resolve: %v (exit %d), want a SignaturesError, ErrUnknownKey, exit 65", err, errdefs.KindOf(err))
		}
		want := []repo.UnknownSigner{
			{Issuer: alice.Fingerprint(), Files: []string{"org.s_app-1.0.jar (org.s:app:1.0)"}},
			{Issuer: bob.Fingerprint(), Files: []string{"org.s_lib-1.0.jar (org.s:lib:1.0)"}},
		}
		if diff := cmp.Diff(want, se.Unknown); diff != "" {
			t.Errorf("unknown signers (-want +got):\n%s", diff)
		}
		for _, s := range []string{alice.Fingerprint(), bob.Fingerprint(), "2 artifacts are signed by 2 keys that are not in the keyring"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not say %q", err, s)
			}
		}
		if got := errdefs.OptionOf(err); got != "resolver.Request.Signatures" {
			t.Errorf("option %q: the CLI's pin-a-signer hint would not be given", got)
		}
	})

	t.Run("one key signs both", func(t *testing.T) {
		err := resolve(t, func(t *testing.T, jar []byte) []byte { return alice.Sign(t, jar) })
		t.Log(err)
		var se *repo.SignaturesError
		if !errors.As(err, &se) || len(se.Unknown) != 1 || len(se.Unknown[0].Files) != 2 {
			t.Fatalf("Resolve: %v, want one issuer signing both jars", err)
		}
	})

	t.Run("a missing signature and an unknown key", func(t *testing.T) {
		err := resolve(t, bySigner(
			func(t *testing.T, jar []byte) []byte { return alice.Sign(t, jar) },
			func(*testing.T, []byte) []byte { return nil }))
		t.Log(err)
		var se *repo.SignaturesError
		if !errors.As(err, &se) || !errors.Is(err, repo.ErrSignatureMissing) || !errors.Is(err, pgpverify.ErrUnknownKey) || errdefs.KindOf(err) != errdefs.Invalid {
			t.Fatalf("Resolve: %v (exit %d), want ErrSignatureMissing and ErrUnknownKey, exit 65", err, errdefs.KindOf(err))
		}
		if diff := cmp.Diff([]string{"org.s_lib-1.0.jar"}, se.Missing); diff != "" || len(se.Unknown) != 1 {
			t.Errorf("missing (-want +got):\n%s\nunknown %v", diff, se.Unknown)
		}
		if got := errdefs.OptionOf(err); got != "resolver.Request.Signatures" {
			t.Errorf("option %q, want the pin-a-signer hint for the unknown key", got)
		}
	})

	t.Run("bad signature and an unknown key", func(t *testing.T) {
		err := resolve(t, bySigner(
			func(t *testing.T, jar []byte) []byte { return alice.Sign(t, jar) },
			func(t *testing.T, _ []byte) []byte { return pinned.Sign(t, []byte("tampered")) }))
		t.Log(err)
		var se *repo.SignaturesError
		if !errors.As(err, &se) || !errors.Is(err, pgpverify.ErrBad) || !errors.Is(err, pgpverify.ErrUnknownKey) || errdefs.KindOf(err) != errdefs.Invalid {
			t.Fatalf("Resolve: %v (exit %d), want ErrBad and ErrUnknownKey, exit 65", err, errdefs.KindOf(err))
		}
		if diff := cmp.Diff([]string{"org.s_lib-1.0.jar"}, se.Bad); diff != "" {
			t.Errorf("bad (-want +got):\n%s", diff)
		}
		if got := errdefs.OptionOf(err); got != "" {
			t.Errorf("a bad signature names option %q: the CLI would hint to pin a key, which cannot fix it", got)
		}
		for _, s := range []string{"pinning a key does not fix this", "org.s_lib-1.0.jar", alice.Fingerprint()} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not say %q", err, s)
			}
		}
	})
}
