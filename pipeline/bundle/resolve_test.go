package bundle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

// otherFixture is newFixture with one jar: another lock hash.
func otherFixture(t *testing.T) fixture {
	t.Helper()
	f := newFixture(t)
	f.lock.Artifacts, f.paths = f.lock.Artifacts[:1], f.paths[:1]
	f.lock.LockHash = f.lock.Hash()
	return f
}

// TestImportWithoutTag: a registry repository named without a tag or
// digest imports the bundle export tagged (its only lock-hash tag), or
// the one of the existing lock's hash; several are refused (64) naming
// them, none (66) saying what export's tags look like. Never "latest".
func TestImportWithoutTag(t *testing.T) {
	ctx := context.Background()
	one, two := newFixture(t), otherFixture(t)
	if one.lock.LockHash == two.lock.LockHash {
		t.Fatal("the fixtures have the same lock hash")
	}

	host := registrytest.InProcess(t)
	repo := host + "/team/bundles"
	export(t, one, repo)
	res, err := Import(ctx, repo, t.TempDir())
	if err != nil {
		t.Fatalf("one bundle, no tag: %v", err)
	}
	if diff := cmp.Diff(repo+":"+one.lock.LockHash, res.From); diff != "" {
		t.Errorf("From (-want +got):\n%s", diff)
	}
	if res.LockHash != one.lock.LockHash {
		t.Errorf("imported lock %s, want %s", res.LockHash, one.lock.LockHash)
	}

	// A tag not of export's form is not a candidate.
	export(t, two, repo+":latest")
	if _, err := Import(ctx, repo+"/", t.TempDir()); err != nil {
		t.Fatalf("one bundle and a latest tag: %v", err)
	}

	export(t, two, repo)
	_, err = Import(ctx, repo, t.TempDir())
	if errdefs.KindOf(err) != errdefs.BadArgument {
		t.Fatalf("two bundles: %v, want BadArgument", err)
	}
	t.Logf("two bundles: %v", err)
	for _, w := range []string{one.lock.LockHash, two.lock.LockHash, "name one"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("two bundles: no %q in %v", w, err)
		}
	}

	// An existing lock picks its hash, whatever else the repository holds.
	lockPath := filepath.Join(t.TempDir(), "prebake.lock")
	data, err := two.lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Import(ctx, repo, t.TempDir(), WithExistingLock(lockPath))
	if err != nil {
		t.Fatalf("existing lock: %v", err)
	}
	if res.LockHash != two.lock.LockHash || res.From != repo+":"+two.lock.LockHash {
		t.Errorf("existing lock: imported %s from %s, want %s", res.LockHash, res.From, two.lock.LockHash)
	}
	// A missing lock is no lock: the tags decide (two: refused).
	if _, err := Import(ctx, repo, t.TempDir(), WithExistingLock(lockPath+".none")); errdefs.KindOf(err) != errdefs.BadArgument {
		t.Errorf("missing lock, two bundles: %v, want BadArgument", err)
	}
	// The existing lock's bundle is not there: 66 saying whose hash it is.
	_, err = Import(ctx, host+"/team/empty", t.TempDir(), WithExistingLock(lockPath))
	if errdefs.KindOf(err) != errdefs.NotFound || !strings.Contains(err.Error(), "hash of the existing lock") {
		t.Errorf("existing lock, no such bundle: %v", err)
	}
	t.Logf("existing lock, no such bundle: %v", err)

	// Only a latest tag: 66 naming the repository and export's tags.
	other := host + "/team/other"
	export(t, one, other+":latest")
	_, err = Import(ctx, other, t.TempDir())
	if errdefs.KindOf(err) != errdefs.NotFound || !strings.Contains(err.Error(), other+":<lock-hash>") {
		t.Errorf("no bundle tag: %v", err)
	}
	t.Logf("no bundle tag: %v", err)
	// A missing repository: 66.
	if _, err := Import(ctx, host+"/team/none", t.TempDir()); errdefs.KindOf(err) != errdefs.NotFound {
		t.Errorf("missing repository: %v, want NotFound", err)
	}
}

func TestIsExportTag(t *testing.T) {
	for tag, want := range map[string]bool{
		strings.Repeat("a", 64):             true,
		strings.Repeat("0f", 32):            true,
		strings.Repeat("A", 64):             false,
		strings.Repeat("a", 63):             false,
		"latest":                            false,
		strings.Repeat("g", 64):             false,
		"sha256-" + strings.Repeat("a", 57): false,
	} {
		if got := isExportTag(tag); got != want {
			t.Errorf("isExportTag(%q) = %v", tag, got)
		}
	}
}
