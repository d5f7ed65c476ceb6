package cmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/mavenhttp"
)

// httpRepo serves s3FileRepo's two modules over HTTP, so jars are
// downloaded (a file:// repository is copied, not downloaded).
func httpRepo(t *testing.T) string {
	t.Helper()
	srv := mavenhttp.New(strings.TrimPrefix(s3FileRepo(t), "file://"))
	t.Cleanup(srv.Close)
	return srv.URL()
}

// TestQuietStderr: -q prints nothing on stderr for a successful resolve
// (with downloads) and bake s3 into a file:// store.
func TestQuietStderr(t *testing.T) {
	repo := httpRepo(t)
	cache := t.TempDir()
	common := []string{"--no-default-repositories", "--repositories", repo, "--cache", cache, "--packages", "com.example:lib-a:1.0"}
	for _, args := range [][]string{
		append([]string{"-q", "resolve"}, common...),
		append([]string{"-q", "bake", "s3", "--store", "file://" + t.TempDir()}, common...),
	} {
		out, stderr, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if stderr != "" {
			t.Errorf("%v: stderr %q, want nothing", args, stderr)
		}
		if out == "" {
			t.Errorf("%v: no result on stdout", args)
		}
	}
}

// TestPlainProgressLines: stderr that is not a terminal gets plain lines,
// never bar escape codes: one line per download and upload at -v, only
// step summaries at the normal level.
func TestPlainProgressLines(t *testing.T) {
	repo := httpRepo(t)
	// s3FileRepo's jars: "PK\x03\x04 fake jar " + the artifact id.
	size := len("PK\x03\x04 fake jar lib-a")
	perFile := []string{
		fmt.Sprintf("%scom/example/lib-a/1.0/lib-a-1.0.jar: %d bytes in ", repo, size),
		fmt.Sprintf("%scom/example/lib-b/1.0/lib-b-1.0.jar: %d bytes in ", repo, size),
		fmt.Sprintf("com.example_lib-a-1.0.jar: %d bytes in ", size),
		fmt.Sprintf("com.example_lib-b-1.0.jar: %d bytes in ", size),
	}
	for _, verbose := range []bool{false, true} {
		args := []string{"bake", "s3", "--store", "file://" + t.TempDir(), "--no-default-repositories", "--repositories", repo,
			"--cache", t.TempDir(), "--packages", "com.example:lib-a:1.0"}
		if verbose {
			args = append([]string{"-v"}, args...)
		}
		_, stderr, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(stderr, "\x1b\r") {
			t.Errorf("%v: escape codes in %q", args, stderr)
		}
		if !strings.Contains(stderr, "2 jars sent, 0 already there") {
			t.Errorf("%v: no summary line in:\n%s", args, stderr)
		}
		for _, line := range perFile {
			if got := strings.Count(stderr, line); got != map[bool]int{false: 0, true: 1}[verbose] {
				t.Errorf("verbose=%v: %d lines %q in:\n%s", verbose, got, line, stderr)
			}
		}
	}
}
