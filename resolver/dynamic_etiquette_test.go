package resolver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// dynHTTP serves files (see writeRepo) and resolves coord from it.
func dynHTTP(t *testing.T, files map[string]string, faults map[string]mavenhttp.Fault, coord string) (*mavenhttp.Server, error) {
	t.Helper()
	srv := mavenhttp.New(strings.TrimPrefix(writeRepo(t, files), "file://"))
	t.Cleanup(srv.Close)
	for p, f := range faults {
		srv.SetFault(p, f)
	}
	req := Request{Packages: []string{coord}, Repositories: []string{srv.URL()}, NoDefaultRepositories: true,
		CacheDir: t.TempDir(), ChecksumPolicy: ChecksumIgnore}
	_, err := Resolve(context.Background(), req, WithRetry(2, 10*time.Millisecond))
	return srv, err
}

// TestDynamicRevisionRefusalIsNotNotFound (issue 41): a 429 or 403 met
// while a dynamic revision is picked (its listing, or the POM of a
// candidate) fails the resolution with that refusal (exit 76 or 77), not
// with the "not found" of the revision left unresolved.
func TestDynamicRevisionRefusalIsNotNotFound(t *testing.T) {
	files := map[string]string{
		"lib/maven-metadata.xml": dynMeta("1.0", "1.1"),
		"lib/1.0/lib-1.0.pom":    dynPOM("lib", "1.0"), "lib/1.0/lib-1.0.jar": "j",
		"lib/1.1/lib-1.1.pom": dynPOM("lib", "1.1"), "lib/1.1/lib-1.1.jar": "j",
	}
	for _, tc := range []struct {
		name, path string
		fault      mavenhttp.Fault
		kind       errdefs.Kind
	}{
		{"429 on the listing", "/org/dyn/lib/maven-metadata.xml", mavenhttp.Status(429, -1, "Retry-After", "1800"), errdefs.RateLimited},
		{"429 on a candidate's POM", "/org/dyn/lib/1.1/lib-1.1.pom", mavenhttp.Status(429, -1, "Retry-After", "1800"), errdefs.RateLimited},
		{"403 on a candidate's POM", "/org/dyn/lib/1.1/lib-1.1.pom", mavenhttp.Status(403, -1), errdefs.Denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dynHTTP(t, files, map[string]mavenhttp.Fault{tc.path: tc.fault}, "org.dyn:lib:1.+")
			if err == nil || errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != tc.kind {
				t.Errorf("err = %v (kind %v), want %v and not ErrNotFound", err, errdefs.KindOf(err), tc.kind)
			}
		})
	}
}

// TestDynamicRevisionProbesBounded (security review 4, L1): a listing of
// 5,000 versions none of which has a POM costs at most maxDynamicProbes
// POM requests (Ivy would ask for all), and fails as invalid input.
func TestDynamicRevisionProbesBounded(t *testing.T) {
	vs := make([]string, 5000)
	for i := range vs {
		vs[i] = fmt.Sprintf("1.%d", i)
	}
	files := map[string]string{"lib/maven-metadata.xml": dynMeta(vs...)}
	srv, err := dynHTTP(t, files, nil, "org.dyn:lib:latest.release")
	if errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(err.Error(), "probes no further") {
		t.Errorf("err = %v (kind %v), want invalid input naming the bound", err, errdefs.KindOf(err))
	}
	poms := 0
	for _, e := range srv.Log() {
		if strings.HasSuffix(e.Path, ".pom") && !strings.Contains(e.Path, "latest.release") { // the unresolved node's own
			poms++
		}
	}
	if poms > maxDynamicProbes {
		t.Errorf("%d POM requests, want at most %d", poms, maxDynamicProbes)
	}
	t.Logf("%d requests, %d of them POMs", srv.Requests(), poms)

	// A listing whose latest has a POM resolves with one probe.
	files["lib/1.4999/lib-1.4999.pom"], files["lib/1.4999/lib-1.4999.jar"] = dynPOM("lib", "1.4999"), "j"
	if _, err := dynHTTP(t, files, nil, "org.dyn:lib:latest.release"); err != nil {
		t.Errorf("latest has a POM: %v", err)
	}
}
