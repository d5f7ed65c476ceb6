package resolver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/maven"
	"github.com/prebake/prebake/resolver/repo"
)

// hostileFiles writes, under root, the over-size and hostile repository
// files of the review's findings 2 and 6: a POM one byte over the cap
// (sparse), a maven-metadata.xml one byte over it, a .sha1 over its cap,
// and the 848-byte property-expansion bomb. Each case's root module is
// named by its coordinate.
func hostileFiles(t *testing.T, root string) {
	t.Helper()
	write := func(rel, data string, size int64) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if size > 0 {
			if err := os.Truncate(p, size); err != nil { // sparse: no disk cost
				t.Fatal(err)
			}
		}
	}
	pomOf := func(a, body string) string {
		return "<project><groupId>ev</groupId><artifactId>" + a + "</artifactId><version>1</version>" + body + "</project>"
	}
	write("ev/huge/1/huge-1.pom", pomOf("huge", "<description>"), repo.MaxPOMSize+1)
	write("ev/huge/1/huge-1.jar", "jar", 0)
	write("ev/meta/1/meta-1.pom", pomOf("meta", "<dependencies><dependency><groupId>ev</groupId><artifactId>dyn</artifactId><version>latest.release</version></dependency></dependencies>"), 0)
	write("ev/meta/1/meta-1.jar", "jar", 0)
	write("ev/dyn/maven-metadata.xml", "<metadata><versioning><versions><version>1</version>", repo.MaxMetadataSize+1)
	write("ev/sum/1/sum-1.pom", pomOf("sum", ""), 0)
	write("ev/sum/1/sum-1.pom.sha1", "0", repo.MaxChecksumSize+1)
	var props strings.Builder
	props.WriteString("<properties><p0>xxxxxxxxxx</p0>")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&props, "<p%d>%s</p%d>", i, strings.Repeat(fmt.Sprintf("${p%d}", i-1), 10), i)
	}
	props.WriteString("</properties>")
	write("ev/propbomb/1/propbomb-1.pom", pomOf("propbomb", props.String()+
		"<dependencies><dependency><groupId>ev</groupId><artifactId>x</artifactId><version>${p9}</version></dependency></dependencies>"), 0)
	write("ev/propbomb/1/propbomb-1.jar", "jar", 0)
	// Finding 1 over HTTP too: a groupId that climbs out of the cache.
	write("ev/trav/1/trav-1.pom", pomOf("trav", "<dependencies><dependency><groupId>../../../../../../tmp/PWNED</groupId><artifactId>art</artifactId><version>1</version></dependency></dependencies>"), 0)
	write("ev/trav/1/trav-1.jar", "jar", 0)
	write("tmp/PWNED/art/1/art-1.pom", pomOf("art", ""), 0)
	write("tmp/PWNED/art/1/art-1.jar", "MALICIOUS", 0)
}

var hostileCases = []struct {
	coord string
	is    error // the error matches it
	in    string
}{
	{"ev:huge:1", repo.ErrTooLarge, "huge-1.pom"},
	{"ev:meta:1", repo.ErrTooLarge, "maven-metadata.xml"},
	{"ev:sum:1", repo.ErrTooLarge, "sum-1.pom.sha1"},
	{"ev:propbomb:1", maven.ErrExpansion, "${p9} expands to more than"},
	{"ev:trav:1", maven.ErrInvalidCoordinate, "trav-1.pom: dependency"},
}

// checkHostile resolves each hostile case from repo: exit 65, an error
// that names the file, in well under a second and a few MB (the review saw
// 966 MB for a 200 MB POM, 387 MB for the metadata, 1.8 GB and a crash for
// the bomb).
func checkHostile(t *testing.T, repo string) {
	for _, tc := range hostileCases {
		t.Run(tc.coord, func(t *testing.T) {
			policy := ChecksumIgnore
			if strings.HasSuffix(tc.in, ".sha1") { // ignore requests no checksum file at all
				policy = ChecksumWarn
			}
			req := Request{Packages: []string{tc.coord}, Repositories: []string{repo}, NoDefaultRepositories: true,
				CacheDir: t.TempDir(), ChecksumPolicy: policy}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := Resolve(context.Background(), req, WithRetry(1, 0))
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%v, %d MB allocated: %v", elapsed.Round(time.Millisecond), alloc>>20, err)
			if code := errdefs.KindOf(err); code != errdefs.Invalid || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.in) {
				t.Fatalf("exit %d, err %v; want 65, %v, naming %s", code, err, tc.is, tc.in)
			}
			if len(err.Error()) > 600 {
				t.Errorf("a %d-byte error", len(err.Error()))
			}
			// The caps bound the bytes read to 16 MiB (an HTTP body is
			// kept in memory while it arrives).
			if elapsed > 2*time.Second || alloc > 80<<20 {
				t.Errorf("took %v and allocated %d MB", elapsed, alloc>>20)
			}
		})
	}
}

func TestSizeAndExpansionLimitsFile(t *testing.T) {
	root := t.TempDir()
	hostileFiles(t, root)
	checkHostile(t, "file://"+root+"/")
}

// TestSizeAndExpansionLimitsNginx: the same over HTTP from a real nginx
// (an over-size POM gave exit 73 before; the bomb also goes through the
// speculative prefetch there).
func TestSizeAndExpansionLimitsNginx(t *testing.T) {
	testenv.RequireIT(t)
	root := t.TempDir()
	hostileFiles(t, root)
	ng := mavenhttp.StartNginx(t, root, "u", "p")
	checkHostile(t, ng.URL)
	log, err := os.ReadFile(filepath.Join(ng.Dir, "logs", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "PWNED") || strings.Contains(string(log), "..") {
		t.Errorf("a hostile request reached the server:\n%s", log)
	}
}
