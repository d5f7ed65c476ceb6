package resolver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// TestIvySettingsLockStale: the lock records the repositories the settings
// produced (never their credentials), so changing the settings makes the
// lock stale.
func TestIvySettingsLockStale(t *testing.T) {
	repos, _ := filepath.Abs(filepath.Join(ivsDir, "repos"))
	srv := mavenhttp.New(repos, mavenhttp.WithBasicAuth(ivsUser, ivsPass))
	defer srv.Close()
	settings := func(repo string) string {
		return `<ivysettings><settings defaultResolver="r"/><credentials host="127.0.0.1" username="` + ivsUser + `" passwd="` + ivsPass + `"/>
			<resolvers><ibiblio name="r" root="` + srv.URL() + repo + `/" m2compatible="true"/></resolvers></ivysettings>`
	}
	dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": settings("repo-a")})
	req := Request{Packages: []string{"org.prebake.ivs:app:1.0"}, IvySettings: filepath.Join(dir, "ivysettings.xml"),
		LockPath: filepath.Join(dir, "prebake.lock"), CacheDir: filepath.Join(dir, "cache"), Home: dir}
	ctx := context.Background()
	log := &m2test.LogBuf{}
	if _, err := Resolve(ctx, req, WithLogger(log)); err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(req.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(lock) + log.String(); strings.Contains(s, ivsPass) || !strings.Contains(string(lock), srv.URL()+"repo-a/") {
		t.Errorf("the lock must record the repository without its credentials:\n%s", s)
	}
	req.Frozen = true
	if _, err := Resolve(ctx, req); err != nil {
		t.Fatalf("unchanged settings: %v", err)
	}
	if err := os.WriteFile(req.IvySettings, []byte(settings("repo-b")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Only the repositories changed: the lock holds by content (review 3,
	// finding 8), with a notice; other packages are stale.
	log = &m2test.LogBuf{}
	if _, err = Resolve(ctx, req, WithLogger(log)); err != nil || !strings.Contains(log.String(), "only the repositories changed") {
		t.Errorf("changed settings with --frozen: %v, want the lock used by content\n%s", err, log.String())
	}
	req.Packages = []string{"org.prebake.ivs:app:2.0"}
	_, err = Resolve(ctx, req)
	if errdefs.KindOf(err) != errdefs.Stale || !errors.Is(err, err) {
		t.Errorf("changed packages with --frozen: %v, want exit %d", err, errdefs.Stale)
	}
}

// TestIvySettingsReturnFirstDynamic: a dynamic revision through a
// returnFirst chain of several resolvers is refused (Ivy would take the
// first resolver's match, not the latest), naming the chain.
func TestIvySettingsReturnFirstDynamic(t *testing.T) {
	repos, _ := filepath.Abs(filepath.Join(ivsDir, "repos"))
	dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="rf"/><resolvers>
		<chain name="rf" returnFirst="true"><ibiblio name="a" root="file://` + repos + `/repo-a/" m2compatible="true"/><ibiblio name="b" root="file://` + repos + `/repo-b/" m2compatible="true"/></chain>
		</resolvers></ivysettings>`})
	req := Request{Packages: []string{"org.prebake.ivs:dyn:1.0"}, IvySettings: filepath.Join(dir, "ivysettings.xml"), CacheDir: filepath.Join(dir, "cache"), Home: dir}
	_, err := Resolve(context.Background(), req)
	if errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(fmt.Sprint(err), "returnFirst") {
		t.Errorf("got %v, want exit 65 naming returnFirst", err)
	}
	req.Packages = []string{"org.prebake.ivs:app:1.0"} // fixed versions are fine
	if _, err := Resolve(context.Background(), req); err != nil {
		t.Errorf("fixed versions through returnFirst: %v", err)
	}
}
