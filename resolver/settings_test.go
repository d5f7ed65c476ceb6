package resolver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
)

// mirrorSettings is a settings.xml mirroring every repository to url,
// behind basic auth with the password read from $PREBAKE_TEST_MIRROR_PW.
func mirrorSettings(t *testing.T, url, user string) string {
	return writeSettings(t, `
  <mirrors>
    <mirror><id>corp</id><name>Corp Nexus</name><url>`+url+`</url><mirrorOf>*</mirrorOf></mirror>
  </mirrors>
  <servers>
    <server><id>corp</id><username>`+user+`</username><password>${env.PREBAKE_TEST_MIRROR_PW}</password></server>
  </servers>`)
}

// TestResolveThroughMirror resolves central, spark-packages and a
// --repositories entry through one mirror behind basic auth whose password
// comes from the environment via <servers>.
func TestResolveThroughMirror(t *testing.T) {
	const user, pass = "ci-bot", "mirr0r-s3cret"
	t.Setenv("PREBAKE_TEST_MIRROR_PW", pass)
	m := m2test.New(t)
	m.Module("org.x", "a", "1.0")
	m.Module("org.x", "b", "2.0")
	srv := mavenhttp.New(m.Dir, mavenhttp.WithBasicAuth(user, pass))
	defer srv.Close()

	dir := t.TempDir()
	req := Request{
		Packages:     []string{"org.x:a:1.0,org.x:b:2.0"},
		Repositories: []string{"https://unreachable.invalid/maven/"},
		Settings:     mirrorSettings(t, srv.URL(), user),
		LockPath:     filepath.Join(dir, "prebake.lock"),
		CacheDir:     filepath.Join(dir, "cache"),
	}
	ctx := context.Background()
	log := &m2test.LogBuf{}
	res, err := Resolve(ctx, req, flatOpts(WithLogger(log))...)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{srv.URL()}, res.Lock.Inputs.Repositories); d != "" {
		t.Errorf("inputs repositories (-want +got):\n%s", d)
	}
	for _, a := range res.Lock.Artifacts {
		if a.Repository != srv.URL() {
			t.Errorf("%s: repository %q, want the mirror %q", a.File, a.Repository, srv.URL())
		}
	}
	if len(res.Lock.Artifacts) != 2 {
		t.Errorf("artifacts %+v", res.Lock.Artifacts)
	}
	lock, err := os.ReadFile(req.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	if all := string(lock) + log.String(); strings.Contains(all, pass) || strings.Contains(all, user) {
		t.Errorf("credentials in the lock or the log:\n%s", all)
	}

	// LockFor sees the same chain: the lock matches without a request.
	srv.Reset()
	if _, err := LockFor(context.Background(), req, flatOpts()...); err != nil {
		t.Errorf("LockFor: %v", err)
	}
	// Without the settings only the repositories differ: a frozen lock
	// holds by content, with a notice (review 3, finding 8); not frozen,
	// it is stale (resolved again).
	noSettings := req
	noSettings.Settings = ""
	if _, err := LockFor(context.Background(), noSettings, flatOpts()...); errdefs.KindOf(err) != errdefs.Stale {
		t.Errorf("LockFor without settings, not frozen: %v, want a stale lock", err)
	}
	noSettings.Frozen = true
	noticed := &m2test.LogBuf{}
	if _, err := LockFor(context.Background(), noSettings, append(flatOpts(), WithLogger(noticed))...); err != nil || !strings.Contains(noticed.String(), "only the repositories changed") {
		t.Errorf("LockFor without settings: %v, want the lock with a notice\n%s", err, noticed.String())
	}
	otherPkgs := noSettings
	otherPkgs.Packages = []string{"org.example:other:1.0"}
	if _, err := LockFor(context.Background(), otherPkgs, flatOpts()...); errdefs.KindOf(err) != errdefs.Stale {
		t.Errorf("LockFor with other packages: %v, want a stale lock", err)
	}

	// FetchLocked into an empty cache goes to the mirror with the
	// settings' credentials.
	paths, err := FetchLocked(ctx, res.Lock, Request{CacheDir: filepath.Join(dir, "cache-fetch"), Repositories: req.Repositories, Settings: req.Settings}, flatOpts()...)
	if err != nil {
		t.Fatalf("FetchLocked: %v", err)
	}
	for i, p := range paths {
		if b, err := os.ReadFile(p); err != nil || m2test.Sha256Hex(b) != res.Lock.Artifacts[i].Sha256 {
			t.Errorf("fetched blob %s: %v", p, err)
		}
	}
	if srv.Requests() == 0 {
		t.Error("FetchLocked made no request to the mirror")
	}

	// <offline>true</offline> acts as --offline: an empty cache fails with 69.
	off := writeSettings(t, `<offline>true</offline>
  <mirrors><mirror><id>corp</id><url>`+srv.URL()+`</url><mirrorOf>*</mirrorOf></mirror></mirrors>`)
	_, err = FetchLocked(ctx, res.Lock, Request{CacheDir: filepath.Join(dir, "cache-off"), Settings: off}, flatOpts()...)
	if errdefs.KindOf(err) != errdefs.Unavailable {
		t.Errorf("offline settings: err = %v (code %d), want 69", err, errdefs.KindOf(err))
	}

	// A wrong password: exit 77, naming the mirror URL without userinfo.
	t.Setenv("PREBAKE_TEST_MIRROR_PW", "wr0ng-pw")
	bad := req
	bad.LockPath = ""
	bad.CacheDir = filepath.Join(dir, "cache2")
	_, err = Resolve(ctx, bad, flatOpts(WithLogger(log))...)
	if errdefs.KindOf(err) != errdefs.Denied {
		t.Fatalf("wrong password: err = %v (code %d), want 77", err, errdefs.KindOf(err))
	}
	if !strings.Contains(err.Error(), srv.URL()+"org/x/a/1.0/") || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: error %q does not name the mirror URL and the status", err)
	}
	if all := err.Error() + log.String(); strings.Contains(all, "wr0ng-pw") || strings.Contains(all, pass) {
		t.Errorf("password printed:\n%s", all)
	}
}

// TestSettingsNginx resolves a real closure from a real nginx mirror behind
// basic auth, credentials from <servers> via ${env.X}.
func TestSettingsNginx(t *testing.T) {
	testenv.RequireIT(t)
	const user, pass = "spark", "n0t-in-any-output"
	ng := mavenhttp.StartNginx(t, "testdata/repo", user, pass)
	t.Setenv("PREBAKE_TEST_MIRROR_PW", pass)
	dir := t.TempDir()
	log := &m2test.LogBuf{}
	req := Request{
		Packages:       []string{jacksonXML.coord},
		Settings:       mirrorSettings(t, ng.PrivateURL, user),
		LockPath:       filepath.Join(dir, "prebake.lock"),
		CacheDir:       filepath.Join(dir, "cache"),
		ChecksumPolicy: ChecksumStrict,
	}
	ctx := context.Background()
	res, err := Resolve(ctx, req, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range res.Lock.Artifacts {
		got = append(got, a.File)
		if a.Repository != ng.PrivateURL {
			t.Errorf("%s: repository %q, want the mirror %q", a.File, a.Repository, ng.PrivateURL)
		}
	}
	if d := cmp.Diff(jacksonXML.want, got); d != "" {
		t.Errorf("jars (-ivy +prebake):\n%s", d)
	}
	lock, err := os.ReadFile(req.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	if all := string(lock) + log.String(); strings.Contains(all, pass) || strings.Contains(all, user+":") {
		t.Errorf("credentials in the lock or the log:\n%s", all)
	}

	t.Setenv("PREBAKE_TEST_MIRROR_PW", "wrong-password")
	bad := req
	bad.LockPath = ""
	bad.CacheDir = filepath.Join(dir, "cache2")
	_, err = Resolve(ctx, bad, WithLogger(log))
	if errdefs.KindOf(err) != errdefs.Denied || !strings.Contains(err.Error(), ng.PrivateURL) {
		t.Fatalf("wrong password: err = %v (code %d), want 77 naming %s", err, errdefs.KindOf(err), ng.PrivateURL)
	}
	if all := err.Error() + log.String(); strings.Contains(all, "wrong-password") || strings.Contains(all, pass) {
		t.Errorf("password printed:\n%s", all)
	}
}

// writeSettings writes a settings.xml with body inside <settings>.
func writeSettings(t *testing.T, body string) string {
	t.Helper()
	return filepath.Join(m2test.WriteFiles(t, map[string]string{"settings.xml": `<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">` + body + `</settings>`}), "settings.xml")
}
