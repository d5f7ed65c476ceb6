package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResolveSparkVersion: resolve follows the Ivy of the line it is told
// (IVY-1642, as the real spark-submit 3.5.0 and 3.5.9 retrieve
// net.sf.saxon:Saxon-HE:12.4: testdata/central/cases/ivy1642-saxon@*.golden),
// and a version it cannot place is exit 64 naming the flag.
func TestResolveSparkVersion(t *testing.T) {
	root := t.TempDir()
	mod := func(g, a, body string) {
		dir := filepath.Join(root, g, a, "1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		pom := "<project><modelVersion>4.0.0</modelVersion><groupId>" + g + "</groupId><artifactId>" + a + "</artifactId><version>1</version>" + body + "</project>"
		if err := os.WriteFile(filepath.Join(dir, a+"-1.pom"), []byte(pom), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, j := range []string{a + "-1.jar", a + "-1-data.jar"} {
			if err := os.WriteFile(filepath.Join(dir, j), []byte("PK\x03\x04 "+j), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mod("x", "resolver", "")
	mod("s", "saxon", `<dependencies><dependency><groupId>x</groupId><artifactId>resolver</artifactId><version>1</version></dependency>
<dependency><groupId>x</groupId><artifactId>resolver</artifactId><version>1</version><classifier>data</classifier></dependency></dependencies>`)
	repo := "file://" + root + "/"
	for _, tc := range []struct {
		version string
		want    []string
	}{
		{"3.5.0", []string{"s_saxon-1.jar", "x_resolver-1-data.jar"}},
		{"3.5.9", []string{"s_saxon-1.jar", "x_resolver-1-data.jar", "x_resolver-1.jar"}},
		{"", []string{"s_saxon-1.jar", "x_resolver-1-data.jar", "x_resolver-1.jar"}},
	} {
		t.Run("spark "+tc.version, func(t *testing.T) {
			out, stderr, code := runCLI(t, "resolve", "--no-default-repositories", "--repositories", repo, "--cache", t.TempDir(),
				"--spark-version", tc.version, "-o", "names", "s:saxon:1")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if d := cmp.Diff(tc.want, strings.Fields(out)); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
		})
	}
	_, stderr, code := runCLI(t, "resolve", "--no-default-repositories", "--repositories", repo, "--cache", t.TempDir(), "--spark-version", "3.5", "s:saxon:1")
	if code != 64 || !strings.Contains(stderr, "--spark-version") {
		t.Errorf("--spark-version 3.5: exit %d, %q; want 64 naming the flag", code, stderr)
	}
}
