package repo

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/maven"
)

// fastOpts are options for tests: no ~/.m2, short backoff and timeouts.
func fastOpts(extra ...Option) []Option {
	return append([]Option{WithRetry(3, 10*time.Millisecond), WithIdleTimeout(2 * time.Second)}, extra...)
}

func testSource(t *testing.T, repos []string, policy ChecksumPolicy, extra ...Option) *Source {
	t.Helper()
	req := Config{Repositories: repos, NoDefaultRepositories: true, CacheDir: t.TempDir(), ChecksumPolicy: policy}
	o, err := makeOptions(fastOpts(extra...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSourceFor(context.Background(), req, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBuildChain(t *testing.T) {
	tests := []struct {
		name       string
		req        Config
		want       []Repository
		wantErr    string
		wantOption string
	}{
		{
			name: "spark default",
			req:  Config{Home: "/home/u"},
			want: []Repository{
				{RepoLocalM2, "file:///home/u/.m2/repository/"},
				{RepoCentral, DefaultCentralURL},
				{RepoSparkPackage, DefaultSparkPackagesURL},
			},
		},
		{
			name: "DEFAULT_ARTIFACT_REPOSITORY redirects central and spark-packages",
			req: Config{Home: "/home/u", DefaultArtifactRepository: "https://nexus.example/maven",
				Repositories: []string{"https://a.example/m2,file:///srv/repo"}},
			want: []Repository{
				{RepoLocalM2, "file:///home/u/.m2/repository/"},
				{RepoCentral, "https://nexus.example/maven/"},
				{RepoSparkPackage, "https://nexus.example/maven/"},
				{"repo-1", "https://a.example/m2/"},
				{"repo-2", "file:///srv/repo/"},
			},
		},
		{
			name: "no default repositories, userinfo stripped",
			req:  Config{NoDefaultRepositories: true, Repositories: []string{"https://bob:s3cret@a.example/m2/", "http://c.example/r"}},
			want: []Repository{
				{"repo-1", "https://a.example/m2/"},
				{"repo-2", "http://c.example/r/"},
			},
		},
		{
			name:    "no trimming: a space is part of the URL",
			req:     Config{NoDefaultRepositories: true, Repositories: []string{"https://a.example/m2, https://b.example/"}},
			wantErr: "repo-2",
		},
		{
			name:    "bad scheme never prints the password",
			req:     Config{NoDefaultRepositories: true, Repositories: []string{"ftp://bob:s3cret@a.example/"}},
			wantErr: "scheme must be http, https or file",
		},
		{
			name:       "nothing left",
			req:        Config{NoDefaultRepositories: true},
			wantErr:    "Repositories must name one",
			wantOption: "resolver.Request.NoDefaultRepositories",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, _, err := chainFor(context.Background(), tt.req, defaultOptions(t))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error leaks the password: %v", err)
				}
				var oe *errdefs.OptionError
				if tt.wantOption != "" && (!errors.As(err, &oe) || oe.Option != tt.wantOption) {
					t.Errorf("errors.As(%v, *errdefs.OptionError) = %v, want option %s", err, oe, tt.wantOption)
				}
				if errdefs.KindOf(err) != errdefs.BadArgument {
					t.Errorf("exit code %d, want %d", errdefs.KindOf(err), errdefs.BadArgument)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []Repository
			for _, r := range chain {
				got = append(got, r.Repository)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("chain (-want +got):\n%s", d)
			}
		})
	}
}

func TestPOMChainOrder(t *testing.T) {
	a, b := m2test.New(t), m2test.New(t)
	a.Module("org.x", "both", "1.0")
	b.Module("org.x", "both", "1.0")
	b.Module("org.x", "onlyb", "1.0")
	sa, sb := mavenhttp.New(a.Dir), mavenhttp.New(b.Dir)
	defer sa.Close()
	defer sb.Close()
	s := testSource(t, []string{sa.URL(), "file://" + b.Dir}, ChecksumStrict)
	ctx := context.Background()

	p, err := s.POM(ctx, "org.x", "both", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if p.Repo.Name != "repo-1" || !strings.HasPrefix(p.URL, sa.URL()) {
		t.Errorf("both: served by %v %s, want repo-1", p.Repo, p.URL)
	}
	p, err = s.POM(ctx, "org.x", "onlyb", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if p.Repo.Name != "repo-2" {
		t.Errorf("onlyb: served by %v, want repo-2", p.Repo)
	}
	if !bytes.Contains(p.Data, []byte("<artifactId>onlyb</artifactId>")) {
		t.Errorf("onlyb: data %q", p.Data)
	}
	// The artifact comes from the repository that served the POM.
	cf, err := s.Artifact(ctx, ArtifactRef{Group: "org.x", Artifact: "onlyb", Version: "1.0", Ext: "jar", Repo: p.Repo})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cf.Path)
	if err != nil || string(data) != "jar of org.x:onlyb:1.0" || cf.Sha256 != m2test.Sha256Hex(data) || cf.Path != blobcache.BlobPath(s.cache.Dir, cf.Sha256) {
		t.Errorf("artifact %+v: %q %v", cf, data, err)
	}

	_, err = s.POM(ctx, "org.x", "missing", "1.0")
	if !errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != errdefs.NotFound {
		t.Fatalf("missing: err = %v (code %d), want ErrNotFound/66", err, errdefs.KindOf(err))
	}
	for _, w := range []string{"org.x:missing:1.0", "repo-1 (" + sa.URL() + ")", "repo-2 (file://" + b.Dir + "/)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing: error %q lacks %q", err, w)
		}
	}
}

func TestSingleflight(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	srv := mavenhttp.New(a.Dir, mavenhttp.WithDelay(30*time.Millisecond))
	defer srv.Close()
	s := testSource(t, []string{srv.URL()}, ChecksumWarn)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.POM(context.Background(), "org.x", "m", "1.0")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/org/x/m/1.0/m-1.0.pom", "/org/x/m/1.0/m-1.0.pom.sha1"} {
		if n := srv.Count(p); n != 1 {
			t.Errorf("%s requested %d times, want 1", p, n)
		}
	}
}

func TestFaults(t *testing.T) {
	const pom = "/org/x/m/1.0/m-1.0.pom"
	tests := []struct {
		name      string
		fault     mavenhttp.Fault
		wantErr   []string // substrings; empty means success
		wantCode  errdefs.Kind
		wantCount int // requests for the POM
		minTime   time.Duration
	}{
		{name: "404 is never retried", fault: mavenhttp.Status(404, -1), wantErr: []string{"not found", "org.x:m:1.0"}, wantCode: errdefs.NotFound, wantCount: 1},
		{name: "5xx is retried then succeeds", fault: mavenhttp.Status(503, 2), wantCount: 3},
		{name: "5xx after retries", fault: mavenhttp.Status(502, -1), wantErr: []string{"502", pom, "after 3 attempts"}, wantCode: errdefs.Unavailable, wantCount: 3},
		{name: "429 honours Retry-After", fault: mavenhttp.Status(429, 1, "Retry-After", "1"), wantCount: 2, minTime: time.Second},
		{name: "401 is a permission error", fault: mavenhttp.Status(401, -1), wantErr: []string{"401", pom}, wantCode: errdefs.Denied, wantCount: 1},
		{name: "truncated body", fault: mavenhttp.Truncated([]byte("<proj"), 100, -1), wantErr: []string{"truncated body", "got 5 of 100 bytes", pom}, wantCode: errdefs.Unavailable, wantCount: 3},
		{name: "truncated once then whole", fault: mavenhttp.Truncated([]byte("<proj"), 100, 1), wantCount: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := m2test.New(t)
			a.Module("org.x", "m", "1.0")
			srv := mavenhttp.New(a.Dir)
			defer srv.Close()
			srv.SetFault(pom, tt.fault)
			s := testSource(t, []string{srv.URL()}, ChecksumWarn)
			start := time.Now()
			p, err := s.POM(context.Background(), "org.x", "m", "1.0")
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(p.Data, []byte("<artifactId>m</artifactId>")) {
					t.Errorf("data %q", p.Data)
				}
			} else {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if c := errdefs.KindOf(err); c != tt.wantCode {
					t.Errorf("exit code %d, want %d (%v)", c, tt.wantCode, err)
				}
				assertNoBlobs(t, s.cache.Dir)
			}
			if n := srv.Count(pom); n != tt.wantCount {
				t.Errorf("%d requests, want %d", n, tt.wantCount)
			}
			if d := time.Since(start); d < tt.minTime {
				t.Errorf("took %s, want at least %s", d, tt.minTime)
			}
		})
	}
}

// assertNoBlobs fails if the cache holds any blob, index entry or temp file.
func assertNoBlobs(t *testing.T, dir string) {
	t.Helper()
	for _, sub := range []string{"blobs/sha256", "index", "tmp"} {
		filepath.WalkDir(filepath.Join(dir, sub), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("cache holds %s after a failure", p)
			}
			return nil
		})
	}
}

func Test429NeverCachedAsMissing(t *testing.T) {
	const pom = "/org/x/m/1.0/m-1.0.pom"
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	srv := mavenhttp.New(a.Dir)
	defer srv.Close()
	srv.SetFault(pom, mavenhttp.Status(429, -1, "Retry-After", "0"))
	s := testSource(t, []string{srv.URL()}, ChecksumWarn)
	_, err := s.POM(context.Background(), "org.x", "m", "1.0")
	if err == nil || errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != errdefs.RateLimited || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err = %v (kind %v), want a 429 RateLimited error that is not ErrNotFound", err, errdefs.KindOf(err))
	}
	srv.SetFault(pom, nil)
	if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
		t.Fatalf("after the 429s stopped: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	const jar = "/org/x/m/1.0/m-1.0.jar"
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	srv := mavenhttp.New(a.Dir)
	release := make(chan struct{})
	defer srv.Close()
	defer close(release)
	srv.SetFault(jar, mavenhttp.Hang([]byte("ja"), 100, release))
	s := testSource(t, []string{srv.URL()}, ChecksumWarn, WithIdleTimeout(150*time.Millisecond), WithRetry(2, time.Millisecond))
	_, err := s.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: s.chain[0].Repository})
	if err == nil || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), srv.URL()+jar[1:]) || errdefs.KindOf(err) != errdefs.Unavailable {
		t.Fatalf("err = %v (code %d), want a timeout naming the URL", err, errdefs.KindOf(err))
	}
	// The client's own count: under load an attempt can time out before the
	// server has taken its request, so the server may have seen fewer.
	if !strings.Contains(err.Error(), "after 2 attempts") {
		t.Errorf("err = %v, want it to say after 2 attempts", err)
	}
	if n := srv.Count(jar); n < 1 || n > 2 {
		t.Errorf("the server saw %d attempts, want 1 or 2", n)
	}
	assertNoBlobs(t, s.cache.Dir)
}

// checksumTestRTT is the delay of the servers that count rounds: long
// enough that requests sent together overlap for sure on a loaded machine.
const checksumTestRTT = 80 * time.Millisecond

// TestChecksums covers verification per policy and, over HTTP, what it
// costs: the checksum requests (none with ignore; the .sha1 alone when it
// exists; .sha256 and .md5 too when it does not) and the sequential rounds
// the server saw (the .sha1 travels with the file; the fallback costs one
// more round, only when the .sha1 is missing).
func TestChecksums(t *testing.T) {
	const base = "org/x/m/1.0/m-1.0.jar"
	jar := []byte("the jar")
	tests := []struct {
		name     string
		sums     []string // checksum files to write
		override string   // replaces the .sha1 content
		policy   ChecksumPolicy
		wantErr  string
		wantCode errdefs.Kind
		wantWarn bool
		// over HTTP: checksum requests and sequential rounds
		wantSums, wantRounds int
		httpOK               bool // the error is file: only (over HTTP nothing is requested)
	}{
		{name: "sha1 ok", sums: []string{"sha1"}, policy: ChecksumStrict, wantSums: 1, wantRounds: 1},
		{name: "sha256 only", sums: []string{"sha256"}, policy: ChecksumStrict, wantSums: 3, wantRounds: 2},
		{name: "md5 only", sums: []string{"md5"}, policy: ChecksumStrict, wantSums: 3, wantRounds: 2},
		{name: "sha1 and sha256", sums: []string{"sha1", "sha256"}, policy: ChecksumWarn, wantSums: 1, wantRounds: 1},
		{name: "sha1 mismatch", sums: []string{"sha1"}, override: "0123456789012345678901234567890123456789", policy: ChecksumWarn, wantErr: "checksum mismatch", wantCode: errdefs.Invalid, wantSums: 1, wantRounds: 1},
		{name: "sha1 mismatch ignore", sums: []string{"sha1"}, override: "0123456789012345678901234567890123456789", policy: ChecksumIgnore, wantErr: "checksum mismatch", wantCode: errdefs.Invalid, wantSums: 0, wantRounds: 1, httpOK: true},
		{name: "sha1 with file name", sums: []string{"sha1"}, override: "@@", policy: ChecksumStrict, wantSums: 1, wantRounds: 1},
		{name: "malformed", sums: []string{"sha1"}, override: "<html>oops</html>", policy: ChecksumWarn, wantErr: "malformed", wantCode: errdefs.Invalid, wantSums: 1, wantRounds: 1},
		{name: "missing strict", policy: ChecksumStrict, wantErr: "no checksum file", wantCode: errdefs.Invalid, wantSums: 3, wantRounds: 2},
		{name: "missing warn", policy: ChecksumWarn, wantWarn: true, wantSums: 3, wantRounds: 2},
		{name: "missing ignore", policy: ChecksumIgnore, wantSums: 0, wantRounds: 1},
		{name: "present ignore", sums: []string{"sha1", "sha256", "md5"}, policy: ChecksumIgnore, wantSums: 0, wantRounds: 1},
	}
	for _, tt := range tests {
		for _, transport := range []string{"http", "file"} {
			t.Run(tt.name+"/"+transport, func(t *testing.T) {
				t.Parallel()
				a := m2test.New(t)
				a.Put(base, jar, tt.sums...)
				switch tt.override {
				case "":
				case "@@":
					x := sha1.Sum(jar)
					a.Put(base+".sha1", []byte(hex.EncodeToString(x[:])+"  m-1.0.jar\n"))
				default:
					a.Put(base+".sha1", []byte(tt.override))
				}
				url := "file://" + a.Dir
				var srv *mavenhttp.Server
				if transport == "http" {
					srv = mavenhttp.New(a.Dir, mavenhttp.WithDelay(checksumTestRTT))
					defer srv.Close()
					url = srv.URL()
				}
				log := &m2test.LogBuf{}
				s := testSource(t, []string{url}, tt.policy, WithLogger(log))
				_, err := s.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: s.chain[0].Repository})
				if tt.wantErr == "" || (tt.httpOK && transport == "http") {
					if err != nil {
						t.Fatal(err)
					}
				} else {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), s.chain[0].base+base) {
						t.Fatalf("err = %v, want %q naming the URL", err, tt.wantErr)
					}
					if c := errdefs.KindOf(err); c != tt.wantCode {
						t.Errorf("exit code %d, want %d", c, tt.wantCode)
					}
					if tt.wantErr == "checksum mismatch" && !errors.Is(err, ErrChecksumMismatch) {
						t.Errorf("err does not match ErrChecksumMismatch: %v", err)
					}
				}
				if got := strings.Contains(log.String(), "no checksum for"); got != tt.wantWarn {
					t.Errorf("warned = %v, want %v; log:\n%s", got, tt.wantWarn, log)
				}
				if srv == nil {
					return
				}
				var sums []string
				for _, e := range srv.Log() {
					if mavenhttp.IsChecksum(e.Path) {
						sums = append(sums, e.Path)
					}
				}
				if len(sums) != tt.wantSums || srv.Requests() != int64(1+tt.wantSums) {
					t.Errorf("%d requests, %d for checksums %q; want 1 + %d", srv.Requests(), len(sums), sums, tt.wantSums)
				}
				if got := srv.Rounds(); got != tt.wantRounds {
					t.Errorf("%d sequential rounds, want %d", got, tt.wantRounds)
				}
			})
		}
	}
}

// TestChecksumsRepositoryWithoutSha1: once a repository has served a file
// without its .sha1, the next files from it ask .sha1, .sha256 and .md5 at
// once (one round, not two); a .sha1 found there again ends that.
func TestChecksumsRepositoryWithoutSha1(t *testing.T) {
	a := m2test.New(t)
	for _, m := range []string{"a", "b"} {
		a.Put("org/x/"+m+"/1.0/"+m+"-1.0.jar", []byte("jar "+m), "sha256")
	}
	a.Put("org/x/c/1.0/c-1.0.jar", []byte("jar c"), "sha1")
	a.Put("org/x/d/1.0/d-1.0.jar", []byte("jar d"), "sha1")
	srv := mavenhttp.New(a.Dir, mavenhttp.WithDelay(checksumTestRTT))
	defer srv.Close()
	s := testSource(t, []string{srv.URL()}, ChecksumStrict)
	for _, step := range []struct {
		module              string
		wantSums, wantRound int
	}{
		{"a", 3, 2}, // .sha1 missing: the fallback follows its 404
		{"b", 3, 1}, // the repository has none: all three at once
		{"c", 3, 1}, // all three at once; the .sha1 is there
		{"d", 1, 1}, // so .sha1 alone again
	} {
		srv.Reset()
		if _, err := s.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: step.module, Version: "1.0", Ext: "jar", Repo: s.chain[0].Repository}); err != nil {
			t.Fatalf("%s: %v", step.module, err)
		}
		if got := srv.Requests() - 1; got != int64(step.wantSums) {
			t.Errorf("%s: %d checksum requests, want %d: %v", step.module, got, step.wantSums, srv.Log())
		}
		if got := srv.Rounds(); got != step.wantRound {
			t.Errorf("%s: %d rounds, want %d", step.module, got, step.wantRound)
		}
	}
}

// TestChecksumsMissingFile: a file that does not exist costs its request
// and, unless the policy is ignore, the .sha1 sent with it; no fallback.
func TestChecksumsMissingFile(t *testing.T) {
	for _, tt := range []struct {
		policy ChecksumPolicy
		want   []string
	}{
		{ChecksumIgnore, []string{"/org/x/m/1.0/m-1.0.jar"}},
		{ChecksumWarn, []string{"/org/x/m/1.0/m-1.0.jar", "/org/x/m/1.0/m-1.0.jar.sha1"}},
		{ChecksumStrict, []string{"/org/x/m/1.0/m-1.0.jar", "/org/x/m/1.0/m-1.0.jar.sha1"}},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			// The delay lets the .sha1 reach the server before the 404 ends the download.
			srv := mavenhttp.New(t.TempDir(), mavenhttp.WithDelay(20*time.Millisecond))
			defer srv.Close()
			s := testSource(t, []string{srv.URL()}, tt.policy)
			_, err := s.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: s.chain[0].Repository})
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("err = %v, want not found", err)
			}
			var got []string
			for _, e := range srv.Log() {
				got = append(got, e.Path)
			}
			slices.Sort(got)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
		})
	}
}

func TestMalformedResponse(t *testing.T) {
	// A server that answers garbage instead of HTTP.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HELLO this is not HTTP\r\n\r\n"))
			c.Close()
		}
	}()
	u := "http://127.0.0.1:" + fmt.Sprint(l.Addr().(*net.TCPAddr).Port) + "/"
	s := testSource(t, []string{u}, ChecksumWarn)
	_, err = s.POM(context.Background(), "org.x", "m", "1.0")
	if err == nil || !strings.Contains(err.Error(), u+"org/x/m/1.0/m-1.0.pom") || errdefs.KindOf(err) != errdefs.Unavailable {
		t.Fatalf("err = %v (code %d), want Unavailable naming the URL", err, errdefs.KindOf(err))
	}

	// Malformed maven-metadata.xml.
	a := m2test.New(t)
	a.Put("org/x/m/maven-metadata.xml", []byte("<metadata><versioning><versions><version>1.0"), "sha1")
	srv := mavenhttp.New(a.Dir)
	defer srv.Close()
	s = testSource(t, []string{srv.URL()}, ChecksumWarn)
	_, err = s.Versions(context.Background(), "org.x", "m")
	if err == nil || !strings.Contains(err.Error(), "malformed "+srv.URL()+"org/x/m/maven-metadata.xml") || errdefs.KindOf(err) != errdefs.Invalid {
		t.Fatalf("err = %v (code %d), want DataErr naming the metadata URL", err, errdefs.KindOf(err))
	}
}

func TestVersions(t *testing.T) {
	a := m2test.New(t)
	a.Put("org/x/m/maven-metadata.xml", []byte(`<metadata><versioning><versions><version>1.0</version><version>1.1</version></versions></versioning></metadata>`), "sha1")
	b := m2test.New(t)
	b.Module("org.x", "m", "1.1")
	b.Module("org.x", "m", "2.0")
	sa, sb := mavenhttp.New(a.Dir), mavenhttp.New(b.Dir)
	defer sa.Close()
	defer sb.Close()
	for _, tt := range []struct {
		name  string
		repos []string
		want  []string
	}{
		{"metadata", []string{sa.URL()}, []string{"1.0", "1.1"}},
		{"http listing", []string{sb.URL()}, []string{"1.1", "2.0"}},
		{"file listing", []string{"file://" + b.Dir}, []string{"1.1", "2.0"}},
		{"chain merges", []string{sa.URL(), sb.URL()}, []string{"1.0", "1.1", "2.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := testSource(t, tt.repos, ChecksumWarn)
			got, err := s.Versions(context.Background(), "org.x", "m")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("versions (-want +got):\n%s", d)
			}
		})
	}
	s := testSource(t, []string{sb.URL()}, ChecksumWarn)
	if _, err := s.Versions(context.Background(), "org.x", "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("nope: err = %v, want ErrNotFound", err)
	}

	// Metadata that lists no version (200,000 nested elements in
	// <versions>, audit 4 L6, or none at all): the error says so, never
	// "versions of org.x:m: " with nothing after it.
	c := m2test.New(t)
	deep := "<metadata><versioning><versions>" + strings.Repeat("<a>", 200000) + strings.Repeat("</a>", 200000) + "</versions></versioning></metadata>"
	c.Put("org/x/deep/maven-metadata.xml", []byte(deep), "sha1")
	c.Put("org/x/none/maven-metadata.xml", []byte("<metadata><versioning><versions></versions></versioning></metadata>"), "sha1")
	sc := mavenhttp.New(c.Dir)
	defer sc.Close()
	s = testSource(t, []string{sc.URL()}, ChecksumWarn)
	for _, a := range []string{"deep", "none"} {
		_, err := s.Versions(context.Background(), "org.x", a)
		if err == nil || strings.HasSuffix(err.Error(), ": ") || !strings.Contains(err.Error(), sc.URL()) {
			t.Errorf("%s: err = %v, want one naming the repository", a, err)
		}
	}
}

func TestCredentialsNeverPrinted(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	srv := mavenhttp.New(a.Dir, mavenhttp.WithBasicAuth("bob", "s3cret-pw"))
	defer srv.Close()
	withUser := func(pw string) string { return strings.Replace(srv.URL(), "http://", "http://bob:"+pw+"@", 1) }

	log := &m2test.LogBuf{}
	s := testSource(t, []string{withUser("s3cret-pw")}, ChecksumWarn, WithLogger(log))
	p, err := s.POM(context.Background(), "org.x", "m", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.URL+p.Repo.URL, "s3cret") {
		t.Errorf("POMFile carries the password: %+v", p)
	}

	s = testSource(t, []string{withUser("wrong-pw")}, ChecksumWarn, WithLogger(log))
	_, err = s.POM(context.Background(), "org.x", "m", "1.0")
	if err == nil || errdefs.KindOf(err) != errdefs.Denied || !strings.Contains(err.Error(), srv.URL()+"org/x/m/1.0/m-1.0.pom") {
		t.Fatalf("err = %v (code %d), want 77 naming the redacted URL", err, errdefs.KindOf(err))
	}
	if all := err.Error() + log.String(); strings.Contains(all, "pw") || strings.Contains(all, "bob") {
		t.Errorf("credentials printed:\n%s", all)
	}
}

func TestOffline(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	srv := mavenhttp.New(a.Dir)
	defer srv.Close()
	cache := t.TempDir()
	o, _ := makeOptions(fastOpts())
	online, err := newSourceFor(context.Background(), Config{Repositories: []string{srv.URL()}, NoDefaultRepositories: true, CacheDir: cache}, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := online.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	offline, err := newSourceFor(context.Background(), Config{Repositories: []string{srv.URL()}, NoDefaultRepositories: true, CacheDir: cache, Offline: true}, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := offline.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
		t.Fatalf("offline, cached: %v", err)
	}
	_, err = offline.Artifact(context.Background(), ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "jar", Repo: offline.chain[0].Repository})
	if err == nil || errdefs.KindOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "m-1.0.jar") {
		t.Fatalf("offline, not cached: err = %v (code %d), want 69 naming the file", err, errdefs.KindOf(err))
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("offline made %d requests", n)
	}
}

// TestSpeculationHints: what speculation reads from a POM (through
// maven.Peek): the literal parent, the packaging, the compile/runtime
// non-optional dependencies, the managed versions without imports.
func TestSpeculationHints(t *testing.T) {
	const pom = `<?xml version="1.0"?>
<project>
  <parent><groupId>org.p</groupId><artifactId>parent</artifactId><version>3</version></parent>
  <artifactId>m</artifactId>
  <packaging>bundle</packaging>
  <properties><a.version>1.${minor}</a.version><minor>2</minor></properties>
  <dependencyManagement><dependencies>
    <dependency><groupId>org.b</groupId><artifactId>b</artifactId><version>${b.version}</version></dependency>
    <dependency><groupId>org.bom</groupId><artifactId>bom</artifactId><version>1</version><scope>import</scope></dependency>
  </dependencies></dependencyManagement>
  <dependencies>
    <dependency><groupId>org.a</groupId><artifactId>a</artifactId><version>${a.version}</version></dependency>
    <dependency><groupId>org.b</groupId><artifactId>b</artifactId></dependency>
    <dependency><groupId>org.t</groupId><artifactId>t</artifactId><version>1</version><scope>test</scope></dependency>
    <dependency><groupId>org.o</groupId><artifactId>o</artifactId><version>1</version><optional>true</optional></dependency>
    <dependency><groupId>org.r</groupId><artifactId>r</artifactId><version>1</version><scope>runtime</scope></dependency>
  </dependencies>
  <profiles><profile><dependencies><dependency><groupId>org.x</groupId><artifactId>x</artifactId><version>1</version></dependency></dependencies></profile></profiles>
</project>`
	h, err := maven.Peek([]byte(pom))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Parent    *maven.Coord
		Packaging string
		Deps      []maven.Coord
		Managed   map[string]string
		Props     map[string]string
	}
	g := got{Packaging: h.Packaging, Deps: specDeps(h), Props: h.Properties, Managed: map[string]string{}}
	if h.Parent != nil && literal(*h.Parent) {
		g.Parent = h.Parent
	}
	for _, k := range []string{"org.b:b", "org.bom:bom", "org.a:a"} {
		if v := managedVersion(h, k); v != "" {
			g.Managed[k] = v
		}
	}
	want := got{
		Parent:    &maven.Coord{Group: "org.p", Artifact: "parent", Version: "3"},
		Packaging: "bundle",
		Deps:      []maven.Coord{{Group: "org.a", Artifact: "a", Version: "${a.version}"}, {Group: "org.b", Artifact: "b"}, {Group: "org.r", Artifact: "r", Version: "1"}},
		Managed:   map[string]string{"org.b:b": "${b.version}"},
		Props:     map[string]string{"a.version": "1.${minor}", "minor": "2"},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("speculation hints (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name, pom string
		literal   bool
	}{
		{"literal parent", "<project><parent><groupId>g</groupId><artifactId>a</artifactId><version>1</version></parent></project>", true},
		{"interpolated parent", "<project><parent><groupId>g</groupId><artifactId>a</artifactId><version>${v}</version></parent></project>", false},
		{"range parent", "<project><parent><groupId>g</groupId><artifactId>a</artifactId><version>[1,2)</version></parent></project>", false},
		{"incomplete parent", "<project><parent><groupId>g</groupId><artifactId>a</artifactId></parent></project>", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := maven.Peek([]byte(tt.pom))
			if err != nil || h.Parent == nil || literal(*h.Parent) != tt.literal {
				t.Errorf("Peek = %+v, %v; want a parent, literal %v", h, err, tt.literal)
			}
		})
	}
}

func TestInterpolateLiteral(t *testing.T) {
	props := map[string]string{"a": "1.${b}", "b": "2", "loop": "${loop}", "range": "[1,2)"}
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"3.0", "3.0", true},
		{"${a}", "1.2", true},
		{"${a}-x", "1.2-x", true},
		{"${missing}", "${missing}", false},
		{"${loop}", "${loop}", false},
		{"${range}", "[1,2)", false},
		{"", "", false},
	} {
		got, ok := interpolateLiteral(tt.in, props)
		if got != tt.want || ok != tt.ok {
			t.Errorf("interpolateLiteral(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestHostSemPriority: low-priority requests hold at most half the slots,
// and a freed slot goes to a waiting ordinary request first.
func TestHostSemPriority(t *testing.T) {
	ctx := context.Background()
	s := newHostSem(4)
	for i := 0; i < 2; i++ {
		if err := s.acquire(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := s.acquire(short, true); err == nil {
		t.Fatal("a third low-priority slot out of 4 was granted")
	}
	for i := 0; i < 2; i++ {
		if err := s.acquire(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan string, 2)
	go func() { s.acquire(ctx, true); got <- "low" }()
	time.Sleep(10 * time.Millisecond) // the low-priority waiter queues first
	go func() { s.acquire(ctx, false); got <- "normal" }()
	time.Sleep(10 * time.Millisecond)
	s.release(false)
	if w := <-got; w != "normal" {
		t.Errorf("freed slot went to the %s waiter, want the normal one", w)
	}
	s.release(true)
	if w := <-got; w != "low" {
		t.Errorf("second freed slot went to %s, want low", w)
	}
}

// TestFilePOMAsArtifact: a file: repository's POM, parsed from memory, is
// still a cache blob when it is asked for as an artifact (packaging pom).
func TestFilePOMAsArtifact(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "m", "1.0")
	s := testSource(t, []string{"file://" + a.Dir}, ChecksumStrict)
	ctx := context.Background()
	p, err := s.POM(ctx, "org.x", "m", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := s.Artifact(ctx, ArtifactRef{Group: "org.x", Artifact: "m", Version: "1.0", Ext: "pom", Repo: s.chain[0].Repository})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cf.Path)
	if err != nil || string(data) != string(p.Data) || cf.Path != s.cache.BlobPath(cf.Sha256) {
		t.Fatalf("blob %q: %q, %v; want the POM", cf.Path, data, err)
	}
	if err := blobcache.VerifyBlob(s.cache.Dir, cf.Sha256, cf.Size); err != nil {
		t.Fatal(err)
	}
}
