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

// jacksonXML is a real closure (Debian POMs) in testdata/repo; want is real
// Ivy's answer (../shared/oracle/run-oracle.sh) on the same repository.
var jacksonXML = struct {
	coord string
	want  []string
}{
	coord: "com.fasterxml.jackson.dataformat:jackson-dataformat-xml:2.14.0",
	want: []string{
		"com.fasterxml.jackson.core_jackson-annotations-2.x.jar",
		"com.fasterxml.jackson.core_jackson-core-2.x.jar",
		"com.fasterxml.jackson.core_jackson-databind-2.x.jar",
		"com.fasterxml.jackson.dataformat_jackson-dataformat-xml-2.14.0.jar",
		"org.codehaus.woodstox_stax2-api-debian.jar",
	},
}

// TestNginxBasicAuth resolves over HTTP from a real nginx, with userinfo
// credentials for the repository behind basic auth.
func TestNginxBasicAuth(t *testing.T) {
	testenv.RequireIT(t)
	const user, pass = "spark", "n0t-in-any-output"
	ng := mavenhttp.StartNginx(t, "testdata/repo", user, pass)
	withCreds := func(pw string) string {
		return strings.Replace(ng.PrivateURL, "http://", "http://"+user+":"+pw+"@", 1)
	}
	dir := t.TempDir()
	log := &m2test.LogBuf{}
	req := Request{
		Packages:              []string{jacksonXML.coord},
		Repositories:          []string{withCreds(pass)},
		NoDefaultRepositories: true,
		LockPath:              filepath.Join(dir, "prebake.lock"),
		CacheDir:              filepath.Join(dir, "cache"),
		ChecksumPolicy:        ChecksumStrict,
	}
	ctx := context.Background()
	res, err := Resolve(ctx, req, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, a := range res.Lock.Artifacts {
		got = append(got, a.File)
		if a.Repository != ng.PrivateURL {
			t.Errorf("%s: repository %q, want %q", a.File, a.Repository, ng.PrivateURL)
		}
		b, err := os.ReadFile(res.Paths[i])
		if err != nil || m2test.Sha256Hex(b) != a.Sha256 || int64(len(b)) != a.Size {
			t.Errorf("%s: blob %s: %v", a.File, res.Paths[i], err)
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

	// The warm path makes no request: nginx's access log does not grow.
	before := accessLines(t, ng)
	res2, err := Resolve(ctx, req)
	if err != nil || !res2.FromLock {
		t.Fatalf("warm: FromLock=%v err=%v", res2 != nil && res2.FromLock, err)
	}
	if after := accessLines(t, ng); after != before {
		t.Errorf("warm resolve made %d requests", after-before)
	}

	// A wrong password: exit code 77, naming the redacted URL.
	bad := req
	bad.Repositories = []string{withCreds("wrong-password")}
	bad.LockPath = ""
	bad.CacheDir = filepath.Join(dir, "cache2")
	_, err = Resolve(ctx, bad, WithLogger(log))
	if err == nil || errdefs.KindOf(err) != errdefs.Denied {
		t.Fatalf("wrong password: err = %v (code %d), want 77", err, errdefs.KindOf(err))
	}
	if !strings.Contains(err.Error(), ng.PrivateURL+"com/fasterxml/jackson/dataformat/jackson-dataformat-xml/2.14.0/") || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: error %q does not name the URL and the status", err)
	}
	if all := err.Error() + log.String(); strings.Contains(all, "wrong-password") || strings.Contains(all, pass) {
		t.Errorf("password printed:\n%s", all)
	}

	// The open location works without credentials.
	open := bad
	open.Repositories = []string{ng.URL}
	open.CacheDir = filepath.Join(dir, "cache3")
	if _, err := Resolve(ctx, open); err != nil {
		t.Errorf("open location: %v", err)
	}
}

func accessLines(t *testing.T, ng *mavenhttp.Nginx) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ng.Dir, "logs", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestNginxChecksumRequests resolves the jackson closure cold from a real
// nginx (testdata/repo has a .sha1 beside every file, as Maven Central
// does) under each checksum policy and counts the requests in nginx's
// access log: under ignore, one per file and no checksum request at all;
// under warn and strict, one .sha1 per file found, nothing more.
func TestNginxChecksumRequests(t *testing.T) {
	testenv.RequireIT(t)
	ng := mavenhttp.StartNginx(t, "testdata/repo", "spark", "unused")
	for _, policy := range []ChecksumPolicy{ChecksumIgnore, ChecksumWarn, ChecksumStrict} {
		t.Run(string(policy), func(t *testing.T) {
			before := accessLines(t, ng)
			req := Request{
				Packages:              []string{jacksonXML.coord},
				Repositories:          []string{ng.URL},
				NoDefaultRepositories: true,
				CacheDir:              t.TempDir(),
				ChecksumPolicy:        policy,
			}
			if _, err := Resolve(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			// Combined log format: ... "GET /path HTTP/1.1" status ...
			b, err := os.ReadFile(filepath.Join(ng.Dir, "logs", "access.log"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")[before:]
			found := map[string]bool{} // files (not checksums) answered 200
			seen := map[string]int{}
			var sums []string
			for _, l := range lines {
				f := strings.Fields(l)
				if len(f) < 9 || f[5] != `"GET` {
					t.Fatalf("unexpected access log line %q", l)
				}
				p := f[6]
				seen[p]++
				if mavenhttp.IsChecksum(p) {
					sums = append(sums, p)
				} else if f[8] == "200" {
					found[p] = true
				}
			}
			for p, n := range seen {
				if n > 1 {
					t.Errorf("%s requested %d times", p, n)
				}
			}
			want := 0
			if policy != ChecksumIgnore {
				want = len(found)
				for _, s := range sums {
					if !strings.HasSuffix(s, ".sha1") {
						t.Errorf("fallback checksum %s requested although every file has its .sha1", s)
					}
				}
			}
			if len(sums) != want {
				t.Errorf("%d checksum requests for %d files, want %d", len(sums), len(found), want)
			}
			t.Logf("%s: %d requests: %d files found, %d checksums", policy, len(lines), len(found), len(sums))
		})
	}
}
