package resolver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/resolver/repo"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/lock"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
)

// signedRepo is a local repository of org.s:app:1.0 depending on
// org.s:lib:1.0, whose jars sign decides the .asc of (nil: none).
func signedRepo(t *testing.T, sign func(t *testing.T, jar []byte) []byte) *m2test.Repo {
	t.Helper()
	r := m2test.New(t)
	r.Put("org/s/lib/1.0/lib-1.0.pom", []byte("<project><groupId>org.s</groupId><artifactId>lib</artifactId><version>1.0</version></project>\n"), "sha1")
	r.Put("org/s/app/1.0/app-1.0.pom", []byte(`<project><groupId>org.s</groupId><artifactId>app</artifactId><version>1.0</version>
<dependencies><dependency><groupId>org.s</groupId><artifactId>lib</artifactId><version>1.0</version></dependency></dependencies></project>
`), "sha1")
	for _, rel := range []string{"org/s/lib/1.0/lib-1.0.jar", "org/s/app/1.0/app-1.0.jar"} {
		jar := []byte("jar bytes of " + rel)
		r.Put(rel, jar, "sha1")
		if sign != nil {
			if sig := sign(t, jar); sig != nil {
				r.Put(rel+".asc", sig)
			}
		}
	}
	return r
}

func keyringOf(t *testing.T, keys ...*pgptest.Key) *pgpverify.Keyring {
	t.Helper()
	var data []byte
	for _, k := range keys {
		data = append(data, k.Public(t)...)
	}
	kr, err := pgpverify.ParseKeyring("test keyring", data)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestResolveVerifiesSignatures(t *testing.T) {
	now := time.Now()
	pinned := pgptest.NewKey(t, "pinned")
	other := pgptest.NewKey(t, "other")
	expiring := pgptest.NewKeyAt(t, "expiring", now.Add(-48*time.Hour), 24*time.Hour)
	kr := keyringOf(t, pinned, expiring)
	onlyLib := func(s func(t *testing.T, jar []byte) []byte) func(t *testing.T, jar []byte) []byte {
		return func(t *testing.T, jar []byte) []byte {
			if strings.Contains(string(jar), "lib-1.0") {
				return s(t, jar)
			}
			return pinned.Sign(t, jar)
		}
	}
	tests := []struct {
		name     string
		sign     func(t *testing.T, jar []byte) []byte
		http     bool
		wantCode errdefs.Kind
		wantErr  error
		wantFP   string
	}{
		{name: "good", sign: func(t *testing.T, jar []byte) []byte { return pinned.Sign(t, jar) }, wantFP: pinned.Fingerprint()},
		{name: "good over http", sign: func(t *testing.T, jar []byte) []byte { return pinned.Sign(t, jar) }, http: true, wantFP: pinned.Fingerprint()},
		{name: "missing", sign: onlyLib(func(*testing.T, []byte) []byte { return nil }), wantCode: errdefs.Invalid, wantErr: repo.ErrSignatureMissing},
		{name: "missing over http", sign: onlyLib(func(*testing.T, []byte) []byte { return nil }), http: true, wantCode: errdefs.Invalid, wantErr: repo.ErrSignatureMissing},
		{name: "bad", sign: onlyLib(func(t *testing.T, _ []byte) []byte { return pinned.Sign(t, []byte("other bytes")) }), wantCode: errdefs.Invalid, wantErr: pgpverify.ErrBad},
		{name: "wrong key", sign: onlyLib(func(t *testing.T, jar []byte) []byte { return other.Sign(t, jar) }), wantCode: errdefs.Invalid, wantErr: pgpverify.ErrUnknownKey},
		{name: "oversized", sign: onlyLib(func(*testing.T, []byte) []byte { return bytes.Repeat([]byte("x"), 100<<10) }), wantCode: errdefs.Invalid, wantErr: repo.ErrTooLarge},
		{name: "oversized over http", sign: onlyLib(func(*testing.T, []byte) []byte { return bytes.Repeat([]byte("x"), 100<<10) }), http: true, wantCode: errdefs.Invalid, wantErr: repo.ErrTooLarge},
		{name: "expired", sign: onlyLib(func(t *testing.T, jar []byte) []byte { return expiring.SignAt(t, jar, now.Add(-time.Hour)) }), wantCode: errdefs.Invalid, wantErr: pgpverify.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signedRepo(t, tt.sign)
			url := "file://" + r.Dir
			if tt.http {
				srv := mavenhttp.New(r.Dir)
				defer srv.Close()
				url = srv.URL()
			}
			dir := t.TempDir()
			req := Request{
				Packages: []string{"org.s:app:1.0"}, Repositories: []string{url}, NoDefaultRepositories: true,
				LockPath: filepath.Join(dir, "prebake.lock"), CacheDir: filepath.Join(dir, "cache"), Signatures: kr,
			}
			res, err := Resolve(context.Background(), req, fastOpts()...)
			if tt.wantErr != nil {
				if err == nil || !errors.Is(err, tt.wantErr) || errdefs.KindOf(err) != tt.wantCode || !strings.Contains(err.Error(), "org.s_lib-1.0.jar") {
					t.Fatalf("Resolve: %v (exit %d), want %v, exit %d, naming org.s_lib-1.0.jar", err, errdefs.KindOf(err), tt.wantErr, tt.wantCode)
				}
				if _, err := os.Stat(req.LockPath); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a lock was written for an unverified set: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range res.Lock.Artifacts {
				got = append(got, a.File+" "+a.SignedBy)
			}
			want := []string{"org.s_app-1.0.jar " + tt.wantFP, "org.s_lib-1.0.jar " + tt.wantFP}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("signers (-want +got):\n%s", diff)
			}
			written, err := lock.Read(req.LockPath)
			if err != nil || written.Artifacts[0].SignedBy != tt.wantFP {
				t.Fatalf("written lock: %v %+v", err, written)
			}

			// Frozen and offline, the repository gone: checked again from the
			// lock and the cached signatures.
			if err := os.RemoveAll(r.Dir); err != nil {
				t.Fatal(err)
			}
			frozen := req
			frozen.Frozen, frozen.Offline = true, true
			if _, err := Resolve(context.Background(), frozen, fastOpts()...); err != nil {
				t.Fatalf("frozen offline re-check: %v", err)
			}
			// The signer no longer pinned: refused, naming the jar.
			frozen.Signatures = keyringOf(t, other)
			if _, err := Resolve(context.Background(), frozen, fastOpts()...); errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(err.Error(), "not in the keyring") {
				t.Errorf("frozen with the signer unpinned: %v (exit %d), want 65", err, errdefs.KindOf(err))
			}
			// A cached signature replaced: refused.
			frozen.Signatures = kr
			lib := written.Artifacts[1]
			if err := os.WriteFile(repo.SignaturePath(req.CacheDir, lib.Sha256), pinned.Sign(t, []byte("x")), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Resolve(context.Background(), frozen, fastOpts()...); !errors.Is(err, pgpverify.ErrBad) || !strings.Contains(err.Error(), lib.File) {
				t.Errorf("frozen with a tampered cached signature: %v", err)
			}
			// Offline with no cached signature: 69 (a file: repository is
			// read offline, and no longer has it: 65), never a silent pass.
			if err := os.Remove(repo.SignaturePath(req.CacheDir, lib.Sha256)); err != nil {
				t.Fatal(err)
			}
			wantCode := errdefs.Invalid
			if tt.http {
				wantCode = errdefs.Unavailable
			}
			if _, err := Resolve(context.Background(), frozen, fastOpts()...); errdefs.KindOf(err) != wantCode || !errors.Is(err, repo.ErrSignatureMissing) {
				t.Errorf("frozen offline, signature not cached: %v (exit %d), wantCode %d", err, errdefs.KindOf(err), wantCode)
			}
		})
	}
}

// A lock written without signatures: frozen, verification is refused (78);
// not frozen, the lock is resolved again and rewritten with its signers.
func TestSignaturesOnAnUnsignedLock(t *testing.T) {
	pinned := pgptest.NewKey(t, "pinned")
	r := signedRepo(t, func(t *testing.T, jar []byte) []byte { return pinned.Sign(t, jar) })
	dir := t.TempDir()
	req := Request{
		Packages: []string{"org.s:app:1.0"}, Repositories: []string{"file://" + r.Dir}, NoDefaultRepositories: true,
		LockPath: filepath.Join(dir, "prebake.lock"), CacheDir: filepath.Join(dir, "cache"),
	}
	if _, err := Resolve(context.Background(), req, fastOpts()...); err != nil {
		t.Fatal(err)
	}
	req.Signatures = keyringOf(t, pinned)
	frozen := req
	frozen.Frozen = true
	if _, err := Resolve(context.Background(), frozen, fastOpts()...); errdefs.KindOf(err) != errdefs.Stale || !errors.Is(err, repo.ErrSignatureMissing) {
		t.Errorf("frozen, unsigned lock: %v (exit %d), want 78", err, errdefs.KindOf(err))
	}
	log := &m2test.LogBuf{}
	res, err := Resolve(context.Background(), req, fastOpts(WithLogger(log))...)
	if err != nil {
		t.Fatal(err)
	}
	if res.FromLock || res.Lock.Artifacts[0].SignedBy != pinned.Fingerprint() || !strings.Contains(log.String(), "records no signing key") {
		t.Errorf("not re-locked with signers: %+v\n%s", res.Lock.Artifacts, log)
	}
	// LockFor (submit's store path, no jar read) checks the recorded signers.
	if _, err := LockFor(context.Background(), req, fastOpts()...); err != nil {
		t.Errorf("LockFor, signers pinned: %v", err)
	}
	stranger := req
	stranger.Signatures = keyringOf(t, pgptest.NewKey(t, "stranger"))
	if _, err := LockFor(context.Background(), stranger, fastOpts()...); errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(err.Error(), "not in the keyring") {
		t.Errorf("LockFor, signer unpinned: %v", err)
	}
	// FetchLocked (bake --lock) checks the signers as well.
	lf, _ := lock.Read(req.LockPath)
	if _, err := FetchLocked(context.Background(), lf, Request{CacheDir: req.CacheDir, Offline: true, Signatures: keyringOf(t, pgptest.NewKey(t, "x"))}, fastOpts()...); errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("FetchLocked with the signer unpinned: %v", err)
	}
}

// Signatures come with the repository's credentials, which no lock, log
// or error holds.
func TestSignaturesWithCredentials(t *testing.T) {
	pinned := pgptest.NewKey(t, "pinned")
	r := signedRepo(t, func(t *testing.T, jar []byte) []byte {
		if strings.Contains(string(jar), "lib-1.0") {
			return nil // missing: the error names its URL
		}
		return pinned.Sign(t, jar)
	})
	srv := mavenhttp.New(r.Dir, mavenhttp.WithBasicAuth("bob", "s3cret-pw"))
	defer srv.Close()
	dir := t.TempDir()
	log := &m2test.LogBuf{}
	req := Request{
		Packages: []string{"org.s:app:1.0"}, Repositories: []string{strings.Replace(srv.URL(), "http://", "http://bob:s3cret-pw@", 1)},
		NoDefaultRepositories: true, LockPath: filepath.Join(dir, "prebake.lock"), CacheDir: filepath.Join(dir, "cache"), Signatures: keyringOf(t, pinned),
	}
	_, err := Resolve(context.Background(), req, fastOpts(WithLogger(log))...)
	if !errors.Is(err, repo.ErrSignatureMissing) || !strings.Contains(err.Error(), srv.URL()+"org/s/lib/1.0/lib-1.0.jar.asc") {
		t.Fatalf("Resolve: %v, want the missing signature named by its URL", err)
	}
	if strings.Contains(err.Error()+log.String(), "s3cret") {
		t.Errorf("credentials printed:\n%v\n%s", err, log)
	}
}
