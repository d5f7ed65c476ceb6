package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
)

// TestWhyCLI runs `prebake why` over testdata/demo-repo, where
// logback-classic 1.4.11 brings slf4j-api 2.0.7, which evicts the directly
// requested 1.7.36.
func TestWhyCLI(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("PREBAKE_CONFIG", "")
	lock := filepath.Join(tmp, "prebake.lock")
	flags := []string{"--offline", "--no-default-repositories",
		"--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/",
		"--cache", filepath.Join(tmp, "cache")}
	coords := []string{"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:1.7.36"}
	why := func(extra ...string) []string {
		return append(append(append([]string{"why"}, extra...), flags...), coords...)
	}

	t.Run("text", func(t *testing.T) {
		code, stdout, stderr := runPrebake(context.Background(), why("org.slf4j:slf4j-api")...)
		if code != 0 {
			t.Fatalf("exit %d\nstderr: %s", code, stderr)
		}
		want := `org.slf4j:slf4j-api: 2.0.7
  paths (2):
    ch.qos.logback:logback-classic:1.4.11 → org.slf4j:slf4j-api:2.0.7
    org.slf4j:slf4j-api:1.7.36 (evicted by 2.0.7)
  evicted:
    1.7.36 by 2.0.7
`
		if d := cmp.Diff(want, stdout); d != "" {
			t.Errorf("stdout (-want +got):\n%s", d)
		}
	})

	t.Run("glob and evicts", func(t *testing.T) {
		code, stdout, stderr := runPrebake(context.Background(), why("ch.qos.logback:*")...)
		if code != 0 {
			t.Fatalf("exit %d\nstderr: %s", code, stderr)
		}
		for _, s := range []string{
			"ch.qos.logback:logback-classic: 1.4.11\n",
			"ch.qos.logback:logback-core: 1.4.11\n",
			"ch.qos.logback:logback-classic:1.4.11 → ch.qos.logback:logback-core:1.4.11\n",
			"ch.qos.logback:logback-classic:1.4.11 → org.slf4j:slf4j-api:2.0.7 evicted org.slf4j:slf4j-api:1.7.36\n",
		} {
			if !strings.Contains(stdout, s) {
				t.Errorf("stdout lacks %q:\n%s", s, stdout)
			}
		}
	})

	t.Run("json with a matching lock", func(t *testing.T) {
		// First run writes the lock; the second is served by it, and why
		// resolves again for the graph and says so.
		for i, wantFromLock := range []bool{false, true} {
			code, stdout, stderr := runPrebake(context.Background(), why("-o", "json", "--lock", lock, "org.slf4j:slf4j-api")...)
			if code != 0 {
				t.Fatalf("run %d: exit %d\nstderr: %s", i, code, stderr)
			}
			if _, err := os.Stat(lock); err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			if got := strings.Contains(stderr, "matches the inputs; resolving again for the graph"); got != wantFromLock {
				t.Errorf("run %d: stderr says it resolved again: %v, want %v\n%s", i, got, wantFromLock, stderr)
			}
			var j jsondoc.Why
			if err := json.Unmarshal([]byte(stdout), &j); err != nil {
				t.Fatalf("run %d: %v\n%s", i, err, stdout)
			}
			want := jsondoc.Why{Module: "org.slf4j:slf4j-api", LockHash: j.LockHash, FromLock: wantFromLock, Modules: []jsondoc.WhyModule{{
				Module: "org.slf4j:slf4j-api", Chosen: []string{"2.0.7"},
				Paths: []jsondoc.WhyPath{
					{Path: []string{"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:2.0.7"}},
					{Path: []string{"org.slf4j:slf4j-api:1.7.36"}, Evicted: true, By: "2.0.7"},
				},
				Evicted: []jsondoc.Evicted{{Module: "org.slf4j:slf4j-api:1.7.36", By: "2.0.7"}},
				Evicts:  []jsondoc.WhyEvicts{},
			}}}
			if d := cmp.Diff(want, j); d != "" || len(j.LockHash) != 64 {
				t.Errorf("run %d: lockHash %q; JSON (-want +got):\n%s", i, j.LockHash, d)
			}
		}
	})

	errs := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"not in the graph", why("org.slf4j:slf4j-simple"), exitcode.NotFound, "org.slf4j:slf4j-simple is not in the resolved graph"},
		{"bad module", why("org.slf4j:slf4j-api:2.0.7"), exitcode.Usage, "want group:artifact"},
		{"no module", []string{"why"}, exitcode.Usage, "requires at least 1 arg"},
		{"bad -o", why("-o", "tree", "org.slf4j:slf4j-api"), exitcode.Usage, `-o "tree"`},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPrebake(context.Background(), tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) || stdout != "" {
				t.Errorf("exit %d, want %d with %q on stderr and nothing on stdout\nstdout: %s\nstderr: %s", code, tt.code, tt.stderr, stdout, stderr)
			}
		})
	}
}
