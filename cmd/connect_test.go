package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestConnectAddExitCodes: connect add's failures map to the README's
// codes: a bad --remote is a usage error, a server that never answers is
// unavailable (after the retries), a cached jar that is not the locked one
// is bad input; the token never shows.
func TestConnectAddExitCodes(t *testing.T) {
	t.Setenv("PREBAKE_CONFIG", "")
	abs, err := filepath.Abs(filepath.Join("..", "testdata", "spark-demo", "repo"))
	if err != nil {
		t.Fatal(err)
	}
	repo := "file://" + abs + "/"
	cache := t.TempDir()
	lockFile := filepath.Join(t.TempDir(), "prebake.lock")
	if code, _, stderr := runPrebake(context.Background(), "resolve", "-o", "names", "--cache", cache, "--no-default-repositories", "--repositories", repo,
		"--packages", "dev.prebake.demo:greeting:1.0", "--lock", lockFile); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	base := []string{"connect", "add", "--cache", cache, "--no-default-repositories", "--repositories", repo, "--lock", lockFile}
	tests := []struct {
		name   string
		remote string
		setup  func(t *testing.T)
		code   int
		want   string
	}{
		{name: "bad remote", remote: "http://x:1/;token=s3cret", code: exitcode.Usage, want: "starts with sc://"},
		{name: "no session uuid", remote: "sc://127.0.0.1:1/;session_id=1;token=s3cret", code: exitcode.Usage, want: "not a UUID"},
		{name: "no server", remote: "sc://127.0.0.1:1/;x-k=v", code: exitcode.Unavailable, want: "ArtifactStatus: Unavailable"},
		{name: "token in clear text", remote: "sc://127.0.0.1:1/;token=s3cret;use_ssl=false", code: exitcode.Usage, want: "use_ssl=false would send it in clear text"}, // audit 4 L2
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPrebake(context.Background(), append(base, "--remote", tt.remote)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) || strings.Contains(stderr+stdout, "s3cret") {
				t.Errorf("exit %d, want %d with %q (and no token)\nstdout: %s\nstderr: %s", code, tt.code, tt.want, stdout, stderr)
			}
		})
	}
	// No --remote and no $SPARK_REMOTE.
	t.Setenv("SPARK_REMOTE", "")
	if code, _, stderr := runPrebake(context.Background(), base...); code != exitcode.Usage || !strings.Contains(stderr, "--remote is required") {
		t.Errorf("no --remote: exit %d\n%s", code, stderr)
	}
}
