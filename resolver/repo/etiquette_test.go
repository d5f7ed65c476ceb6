package repo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// Maven Central etiquette (issue 41; field review 4 §5): a repository that
// throttles (429) or refuses (403) is never taken for one that has no such
// module, a long Retry-After fails at once, every request says who sends
// it, Central gets few requests at a time, and no failure is remembered as
// an absence.

const etPOM = "/org/x/m/1.0/m-1.0.pom"

func etRepo(t *testing.T) *m2test.Repo {
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	return a
}

func hostPort(t *testing.T, u string) string {
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// TestRefusalIsNeverNotFound: one repository of the chain answers 404,
// another 429 or 403. Whatever the order, the module is not "not found"
// (the refusing one may have it): 429 is RateLimited naming the refusing
// repository and its Retry-After, 403 is Denied naming the repository and
// CDN cache misses.
func TestRefusalIsNeverNotFound(t *testing.T) {
	empty := mavenhttp.New(t.TempDir())
	defer empty.Close()
	tests := []struct {
		name     string
		fault    mavenhttp.Fault
		first    bool // the refusing repository comes first in the chain
		wantKind errdefs.Kind
		wantMsg  []string
	}{
		{name: "429 after a 404", fault: mavenhttp.Status(429, -1, "Retry-After", "1800"), wantKind: errdefs.RateLimited,
			wantMsg: []string{"429 Too Many Requests", "rate-limiting", "retry after 30m0s (at 20", "bundle import"}},
		{name: "429 before a 404", fault: mavenhttp.Status(429, -1, "Retry-After", "1800"), first: true, wantKind: errdefs.RateLimited,
			wantMsg: []string{"429 Too Many Requests", "retry after 30m0s"}},
		{name: "429 without Retry-After", fault: mavenhttp.Status(429, -1), wantKind: errdefs.RateLimited,
			wantMsg: []string{"429 Too Many Requests", "3 attempts, no Retry-After"}},
		{name: "403 after a 404", fault: mavenhttp.Status(403, -1), wantKind: errdefs.Denied,
			wantMsg: []string{"403 Forbidden", "refused the request", "403 on some cache misses"}},
		{name: "403 before a 404", fault: mavenhttp.Status(403, -1), first: true, wantKind: errdefs.Denied,
			wantMsg: []string{"403 Forbidden", "403 on some cache misses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mavenhttp.New(etRepo(t).Dir)
			defer srv.Close()
			srv.SetFault(etPOM, tt.fault)
			repos := []string{empty.URL(), srv.URL()}
			if tt.first {
				repos = []string{srv.URL(), empty.URL()}
			}
			s := testSource(t, repos, ChecksumWarn)
			_, err := s.POM(context.Background(), "org.x", "m", "1.0")
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != tt.wantKind {
				t.Errorf("kind %v (ErrNotFound %v), want %v and not ErrNotFound: %v", errdefs.KindOf(err), errors.Is(err, ErrNotFound), tt.wantKind, err)
			}
			for _, m := range append(tt.wantMsg, "repository "+srv.URL()) {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message lacks %q: %v", m, err)
				}
			}
			if tt.wantKind == errdefs.RateLimited {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.Repository != srv.URL() {
					t.Errorf("errors.As *RateLimitError: %+v", rl)
				}
			}
			// Recovered: the next run finds it; so does this run after a 403
			// (after a 429 it honours the Retry-After: TestRateLimitBlocksHost).
			srv.SetFault(etPOM, nil)
			if _, err := testSource(t, repos, ChecksumWarn).POM(context.Background(), "org.x", "m", "1.0"); err != nil {
				t.Errorf("next run after recovery: %v", err)
			}
			if tt.wantKind == errdefs.Denied {
				if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
					t.Errorf("same source after recovery: %v", err)
				}
			}
		})
	}
}

// TestLongRetryAfterFailsFast: Central's IP block says Retry-After: 1800;
// prebake does not sleep it (one request, under a second; bound 15 s for -race on a loaded machine) unless the wait
// allowed covers it; a short one is waited.
func TestLongRetryAfterFailsFast(t *testing.T) {
	srv := mavenhttp.New(etRepo(t).Dir)
	defer srv.Close()
	srv.SetFault(etPOM, mavenhttp.Status(429, 1, "Retry-After", "1800"))
	s := testSource(t, []string{srv.URL()}, ChecksumWarn)
	start := time.Now()
	_, err := s.POM(context.Background(), "org.x", "m", "1.0")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %s: slept on a Retry-After of 1800s", took)
	}
	if errdefs.KindOf(err) != errdefs.RateLimited || errdefs.OptionOf(err) != "resolver.Request.MaxRetryWait" ||
		!strings.Contains(err.Error(), "longer than the 1m0s prebake may wait") {
		t.Errorf("err = %v (kind %v, option %q), want RateLimited explained by MaxRetryWait", err, errdefs.KindOf(err), errdefs.OptionOf(err))
	}
	if n := srv.Count(etPOM); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}

	// A 503's long Retry-After fails as fast, Unavailable.
	srv.Reset()
	srv.SetFault(etPOM, mavenhttp.Status(503, 1, "Retry-After", "1800"))
	s = testSource(t, []string{srv.URL()}, ChecksumWarn)
	if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); errdefs.KindOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "retry after 30m0s") {
		t.Errorf("503: err = %v (kind %v)", err, errdefs.KindOf(err))
	}

	// Allowed to wait (the Config's MaxRetryWait, as cmd sets it): a short
	// Retry-After is waited, then it works.
	srv.Reset()
	srv.SetFault(etPOM, mavenhttp.Status(429, 1, "Retry-After", "1"))
	cfg := Config{Repositories: []string{srv.URL()}, NoDefaultRepositories: true, CacheDir: t.TempDir(), MaxRetryWait: 2 * time.Second}
	s2, err := NewSource(context.Background(), cfg, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := s2.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("took %s: the Retry-After of 1s was not waited", took)
	}

	// A negative MaxRetryWait waits for none.
	srv.Reset()
	srv.SetFault(etPOM, mavenhttp.Status(429, 1, "Retry-After", "1"))
	cfg.MaxRetryWait, cfg.CacheDir = -1, t.TempDir()
	s3, err := NewSource(context.Background(), cfg, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3.POM(context.Background(), "org.x", "m", "1.0"); errdefs.KindOf(err) != errdefs.RateLimited {
		t.Errorf("MaxRetryWait < 0: err = %v", err)
	}
}

// TestRetryWaitEndsWithContext: a Retry-After being waited ends as soon as
// the context is cancelled.
func TestRetryWaitEndsWithContext(t *testing.T) {
	srv := mavenhttp.New(etRepo(t).Dir)
	defer srv.Close()
	srv.SetFault(etPOM, mavenhttp.Status(429, -1, "Retry-After", "30"))
	s := testSource(t, []string{srv.URL()}, ChecksumWarn)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.POM(ctx, "org.x", "m", "1.0")
	if took := time.Since(start); err == nil || took > 3*time.Second {
		t.Errorf("err %v after %s, want a prompt error", err, took)
	}
}

// TestCentral403Retried: Central's edge answers 403 on some cache misses,
// so a 403 from Central is retried; from another repository it is final.
func TestCentral403Retried(t *testing.T) {
	srv := mavenhttp.New(etRepo(t).Dir)
	defer srv.Close()
	srv.SetFault(etPOM, mavenhttp.Status(403, 1))
	s := testSource(t, []string{srv.URL()}, ChecksumWarn, withCentralHosts(hostPort(t, srv.URL())))
	if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
		t.Fatalf("Central's 403 then 200: %v", err)
	}
	if n := srv.Count(etPOM); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	srv.Reset()
	srv.SetFault(etPOM, mavenhttp.Status(403, 1))
	s = testSource(t, []string{srv.URL()}, ChecksumWarn)
	if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); errdefs.KindOf(err) != errdefs.Denied {
		t.Errorf("another repository's 403: err = %v, want Denied", err)
	}
	if n := srv.Count(etPOM); n != 1 {
		t.Errorf("another repository's 403: %d requests, want 1", n)
	}
}

// TestUserAgentOnEveryRequest: POMs, checksums, jars and the doctor's
// probe all carry prebake's User-Agent with the caller's version.
func TestUserAgentOnEveryRequest(t *testing.T) {
	srv := mavenhttp.New(etRepo(t).Dir)
	defer srv.Close()
	ua := UserAgent("1.2.3")
	if want := "prebake/1.2.3 (+https://github.com/prebake/prebake)"; ua != want {
		t.Fatalf("UserAgent = %q, want %q", ua, want)
	}
	cfg := Config{Repositories: []string{srv.URL()}, NoDefaultRepositories: true, CacheDir: t.TempDir(), UserAgent: ua}
	s, err := NewSource(context.Background(), cfg, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := s.POM(context.Background(), "org.x", "m", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: pf.Repo}); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeChain(context.Background(), cfg, time.Second); err != nil {
		t.Fatal(err)
	}
	got := srv.UserAgents()
	if n := srv.Requests(); n < 4 || got[ua] != int(n) {
		t.Errorf("User-Agents %v over %d requests, want %q on all", got, n, ua)
	}

	// No version: still prebake's; a version with spaces stays one token.
	for in, want := range map[string]string{
		"":                           "prebake (+https://github.com/prebake/prebake)",
		"(devel) 0123456789ab-dirty": "prebake/devel--0123456789ab-dirty (+https://github.com/prebake/prebake)",
		"v0.9.0\r\nX-Evil: 1":        "prebake/v0.9.0--X-Evil--1 (+https://github.com/prebake/prebake)",
	} {
		if got := UserAgent(in); got != want {
			t.Errorf("UserAgent(%q) = %q, want %q", in, got, want)
		}
	}
	srv.Reset()
	s = testSource(t, []string{srv.URL()}, ChecksumWarn)
	if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
		t.Fatal(err)
	}
	if got := srv.UserAgents(); got[UserAgent("")] == 0 || len(got) != 1 {
		t.Errorf("default User-Agents %v", got)
	}
}

// TestPerHostLimit counts the requests a server answers at once: Central
// (all its names one budget, across the process's sources) gets at most
// centralPerHost, another host
// WithMaxPerHost, and a mirror is not held to Central's.
func TestPerHostLimit(t *testing.T) {
	a := m2test.New(t)
	const n = 24
	for i := range n {
		a.Module("org.x", fmt.Sprintf("m%d", i), "1.0")
	}
	fetchAll := func(t *testing.T, s *Source) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.POM(context.Background(), "org.x", fmt.Sprintf("m%d", i), "1.0"); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	tests := []struct {
		name     string
		central  bool
		sources  int // at once (default 1)
		opts     []Option
		min, max int
	}{
		{name: "central, default", central: true, min: 2, max: centralPerHost},
		{name: "central, three sources at once (warm's sets)", central: true, sources: 3, min: 2, max: centralPerHost},
		{name: "central, WithMaxPerHost(2)", central: true, opts: []Option{WithMaxPerHost(2)}, min: 2, max: 2},
		{name: "mirror, WithMaxPerHost(3)", opts: []Option{WithMaxPerHost(3)}, min: 2, max: 3},
		{name: "mirror, default", min: centralPerHost + 1, max: 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mavenhttp.New(a.Dir, mavenhttp.WithDelay(50*time.Millisecond))
			defer srv.Close()
			opts := tt.opts
			if tt.central {
				opts = append(opts, withCentralHosts(hostPort(t, srv.URL())))
			}
			var wg sync.WaitGroup
			for range max(1, tt.sources) {
				s := testSource(t, []string{srv.URL()}, ChecksumWarn, opts...)
				wg.Add(1)
				go func() { defer wg.Done(); fetchAll(t, s) }()
			}
			wg.Wait()
			if got := srv.MaxInFlight(); got < tt.min || got > tt.max {
				t.Errorf("%d requests in flight at most, want %d..%d", got, tt.min, tt.max)
			}
			t.Logf("%d requests, %d in flight at most", srv.Requests(), srv.MaxInFlight())
		})
	}
}

// TestFailureNotCachedAsAbsence: a 429, 403, 500 or timeout is not
// remembered as "not found", neither by the source nor in the shared cache:
// the next run, once the server has recovered, finds the module.
func TestFailureNotCachedAsAbsence(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request, n int) bool {
		<-r.Context().Done()
		return true
	}
	tests := []struct {
		name  string
		fault mavenhttp.Fault
		kind  errdefs.Kind
	}{
		{"429", mavenhttp.Status(429, -1, "Retry-After", "1800"), errdefs.RateLimited},
		{"403", mavenhttp.Status(403, -1), errdefs.Denied},
		{"500", mavenhttp.Status(500, -1), errdefs.Unavailable},
		{"timeout", hang, errdefs.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mavenhttp.New(etRepo(t).Dir)
			defer srv.Close()
			srv.SetFault(etPOM, tt.fault)
			cache := t.TempDir()
			cfg := Config{Repositories: []string{srv.URL()}, NoDefaultRepositories: true, CacheDir: cache}
			opts := append(fastOpts(), WithIdleTimeout(200*time.Millisecond), WithRetry(2, 10*time.Millisecond))
			run := func() error {
				s, err := NewSource(context.Background(), cfg, opts...)
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.POM(context.Background(), "org.x", "m", "1.0")
				return err
			}
			err := run()
			if errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != tt.kind {
				t.Fatalf("first run: %v (kind %v), want %v, not ErrNotFound", err, errdefs.KindOf(err), tt.kind)
			}
			srv.SetFault(etPOM, nil)
			before := srv.Count(etPOM)
			if err := run(); err != nil {
				t.Fatalf("second run after recovery: %v", err)
			}
			if diff := cmp.Diff(before+1, srv.Count(etPOM)); diff != "" {
				t.Errorf("requests for the POM in the second run (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIvySettingsRefusesRunningResolvers: a settings file with a
// <packager> resolver (CVE-2026-26032) or another type that logs in or
// runs things is refused by name, naming the file and line, before any
// request: the counting server beside it in the chain gets none.
func TestIvySettingsRefusesRunningResolvers(t *testing.T) {
	srv := mavenhttp.New(etRepo(t).Dir)
	defer srv.Close()
	tests := []struct {
		name, resolver string
		want           []string
	}{
		{"packager", `<packager name="p" buildRoot="${user.home}/.ivy2/packager/build" resourceCache="${user.home}/.ivy2/packager/cache">
      <ivy pattern="` + srv.URL() + `[organisation]/[module]/[revision]/ivy.xml"/>
      <artifact pattern="` + srv.URL() + `[organisation]/[module]/[revision]/packager.xml"/>
    </packager>`, []string{"ivysettings.xml:5: ", "<packager>", "resolver type packager is refused", "CVE-2026-26032", "Ant build"}},
		{"ssh", `<ssh name="p" host="example.org" user="u" userPassword="secret"/>`, []string{"ivysettings.xml:5: ", "resolver type ssh is refused", "runs commands"}},
		{"sftp", `<sftp name="p" host="example.org" user="u" userPassword="secret"/>`, []string{"ivysettings.xml:5: ", "resolver type sftp is refused"}},
		{"vfs", `<vfs name="p"/>`, []string{"ivysettings.xml:5: ", "resolver type vfs is refused", "Commons VFS"}},
		{"jar", `<jar name="p" url="` + srv.URL() + `repo.jar"/>`, []string{"ivysettings.xml:5: ", "resolver type jar is refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := dir + "/ivysettings.xml"
			xml := `<ivysettings>
  <settings defaultResolver="main"/>
  <resolvers>
    <chain name="main">
    ` + tt.resolver + `
      <ibiblio name="central" root="` + srv.URL() + `" m2compatible="true"/>
    </chain>
  </resolvers>
</ivysettings>
`
			if err := writeFile(file, xml); err != nil {
				t.Fatal(err)
			}
			srv.Reset()
			cfg := Config{IvySettings: file, NoDefaultRepositories: true, CacheDir: t.TempDir()}
			s, err := NewSource(context.Background(), cfg, fastOpts()...)
			if err == nil {
				_, err = s.POM(context.Background(), "org.x", "m", "1.0")
				t.Fatalf("no error at NewSource (then %v)", err)
			}
			if errdefs.KindOf(err) != errdefs.Invalid {
				t.Errorf("kind %v, want invalid", errdefs.KindOf(err))
			}
			for _, m := range append(tt.want, file) {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message lacks %q: %v", m, err)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("message quotes a password: %v", err)
			}
			if n := srv.Requests(); n != 0 {
				t.Errorf("%d requests, want 0", n)
			}
		})
	}
}

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o644) }

// TestRateLimitBlocksHost: once a repository has answered 429 with a
// Retry-After longer than the wait allowed, the run sends it no more
// requests (Central blocks the whole IP; each request only adds to the
// count): the next file fails at once, unasked, still rate limited. A
// new run (after the block) asks again.
func TestRateLimitBlocksHost(t *testing.T) {
	a := etRepo(t)
	a.Module("org.x", "n", "1.0")
	srv := mavenhttp.New(a.Dir)
	defer srv.Close()
	srv.SetFault(etPOM, mavenhttp.Status(429, -1, "Retry-After", "1800"))
	s := testSource(t, []string{srv.URL()}, ChecksumWarn)
	if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); errdefs.KindOf(err) != errdefs.RateLimited {
		t.Fatalf("first: %v", err)
	}
	before := srv.Requests()
	_, err := s.POM(context.Background(), "org.x", "n", "1.0")
	if errdefs.KindOf(err) != errdefs.RateLimited || !strings.Contains(err.Error(), "not sent") || errors.Is(err, ErrNotFound) {
		t.Errorf("second: %v (kind %v), want RateLimited, not sent", err, errdefs.KindOf(err))
	}
	if n := srv.Requests() - before; n != 0 {
		t.Errorf("%d requests after the 429, want 0", n)
	}
	if _, err := testSource(t, []string{srv.URL()}, ChecksumWarn).POM(context.Background(), "org.x", "n", "1.0"); err != nil {
		t.Errorf("a new run: %v", err)
	}
}
