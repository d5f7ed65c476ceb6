package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// TestRateLimitedExit (issue 41): a repository answering 429 with Central's
// Retry-After: 1800 makes resolve exit 76 at once, naming the repository
// and when to retry, never 66; 403 stays 77 naming the repository; every
// request carries prebake's User-Agent with its version; --max-retry-wait
// lets a short Retry-After be waited.
func TestRateLimitedExit(t *testing.T) {
	root, _ := isolatedCLI(t)
	srv := mavenhttp.New(filepath.Join(root, "testdata", "demo-repo"))
	defer srv.Close()
	const pom = "/org/slf4j/slf4j-api/2.0.7/slf4j-api-2.0.7.pom"
	run := func(extra ...string) (int, string) {
		args := append([]string{"resolve", "-q", "--no-default-repositories", "--repositories", srv.URL(), "--cache", t.TempDir()}, extra...)
		code, _, errs := runPrebake(context.Background(), append(args, "org.slf4j:slf4j-api:2.0.7")...)
		return code, errs
	}

	srv.SetFault(pom, mavenhttp.Status(429, -1, "Retry-After", "1800"))
	start := time.Now()
	code, errs := run()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("429 with Retry-After 1800: took %s", took)
	}
	if code != exitcode.RateLimited {
		t.Errorf("429: exit %d, want %d\n%s", code, exitcode.RateLimited, errs)
	}
	t.Logf("429 (exit %d):\n%s", code, errs)
	for _, m := range []string{"429 Too Many Requests", "repository " + srv.URL(), "retry after 30m0s", "--max-retry-wait"} {
		if !strings.Contains(errs, m) {
			t.Errorf("429: stderr lacks %q:\n%s", m, errs)
		}
	}

	srv.SetFault(pom, mavenhttp.Status(403, -1))
	if code, errs := run(); code != exitcode.NoPerm || !strings.Contains(errs, "repository "+srv.URL()) || !strings.Contains(errs, "403 on some cache misses") {
		t.Errorf("403: exit %d, want %d naming the repository\n%s", code, exitcode.NoPerm, errs)
	}

	srv.Reset() // the faults below count from here
	srv.SetFault(pom, mavenhttp.Status(429, 1, "Retry-After", "1"))
	if code, errs := run("--max-retry-wait", "5s"); code != 0 {
		t.Errorf("429 Retry-After 1 with --max-retry-wait 5s: exit %d\n%s", code, errs)
	}
	srv.Reset()
	srv.SetFault(pom, mavenhttp.Status(429, 1, "Retry-After", "1"))
	if code, errs := run("--max-retry-wait", "0"); code != exitcode.RateLimited {
		t.Errorf("429 Retry-After 1 with --max-retry-wait 0: exit %d\n%s", code, errs)
	}
	if code, errs := run("--max-retry-wait", "-1s"); code != exitcode.Usage {
		t.Errorf("--max-retry-wait -1s: exit %d\n%s", code, errs)
	}

	agents := srv.UserAgents() // since the last Reset
	want := "prebake/"         // the version of a test binary: (devel) or its revision
	for ua := range agents {
		if !strings.HasPrefix(ua, want) || !strings.HasSuffix(ua, " (+https://github.com/prebake/prebake)") {
			t.Errorf("User-Agent %q on %d requests, want prebake/<version> (+url)", ua, agents[ua])
		}
	}
}
