package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/lockdiff"
)

func TestLockDiffCLI(t *testing.T) {
	dir := filepath.Join("..", "testdata", "lockdiff")
	base, inputs, content := filepath.Join(dir, "base.lock"), filepath.Join(dir, "inputs-changed.lock"), filepath.Join(dir, "content-changed.lock")
	garbage := filepath.Join(t.TempDir(), "bad.lock")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // substrings
		stderrWant string
	}{
		{"equal", []string{"lock", "diff", base, base}, 0, []string{"The locks are identical"}, ""},
		{"inputs changed", []string{"lock", "diff", "--check", base, inputs}, exitDiffer, []string{"conflict: latest → strict", "↑ ch.qos.logback:logback-classic  1.4.11 → 1.4.14  upgrade", "↓ org.slf4j:slf4j-api", "2.0.7 → 1.7.36  downgrade"}, "the locks differ"},
		{"content changed", []string{"lock", "diff", "--check", base, content}, exitDiffer, []string{"!!! CONTENT CHANGED UNDER THE SAME VERSION (1)", "The inputs are identical"}, "the locks differ"},
		{"json", []string{"lock", "diff", "-o", "json", "--check", base, content}, exitDiffer, []string{`"contentChanged":1`}, "the locks differ"},
		{"differ without --check", []string{"lock", "diff", base, content}, 0, []string{"!!! CONTENT CHANGED UNDER THE SAME VERSION (1)"}, ""},
		{"one argument", []string{"lock", "diff", base}, exitcode.Usage, nil, "accepts 2 arg"},
		{"bad -o", []string{"lock", "diff", "-o", "tree", base, base}, exitcode.Usage, nil, `-o "tree"`},
		{"missing lock", []string{"lock", "diff", base, filepath.Join(dir, "nope.lock")}, exitcode.NotFound, nil, "nope.lock"},
		{"malformed lock", []string{"lock", "diff", garbage, base}, exitcode.DataErr, nil, "bad.lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := ExecuteContext(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tt.stderrWant) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderrWant)
			}
		})
	}

	// -o json decodes into the documented schema.
	var stdout, stderr bytes.Buffer
	ExecuteContext(context.Background(), []string{"lock", "diff", "-o", "json", base, inputs}, &stdout, &stderr)
	var d lockdiff.Diff
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	want := lockdiff.Summary{Added: 1, Removed: 1, Upgraded: 2, Downgraded: 1, RepositoryChanged: 1}
	if diff := cmp.Diff(want, d.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestSBOMCLI(t *testing.T) {
	lock := filepath.Join("..", "testdata", "lockdiff", "base.lock")
	run := func(env string, args ...string) (int, []byte, string) {
		t.Helper()
		t.Setenv("SOURCE_DATE_EPOCH", env)
		var stdout, stderr bytes.Buffer
		code := ExecuteContext(context.Background(), args, &stdout, &stderr)
		return code, stdout.Bytes(), stderr.String()
	}
	code, first, stderr := run("", "sbom", "--lock", lock)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, second, _ := run("", "sbom", "--lock", lock, "-o", "json")
	if !bytes.Equal(first, second) {
		t.Errorf("two runs on one lock differ")
	}
	// Everything but the tool version (the test binary's build info) is the golden file.
	var got, want map[string]any
	if err := json.Unmarshal(first, &got); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("..", "testdata", "sbom", "base.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(golden, &want); err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]any{got, want} {
		delete(m["metadata"].(map[string]any)["tools"].(map[string]any)["components"].([]any)[0].(map[string]any), "version")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sbom vs testdata/sbom/base.cdx.json (-want +got):\n%s", diff)
	}

	if code, out, _ := run("1700000000", "sbom", "--lock", lock); code != 0 || !bytes.Contains(out, []byte(`"timestamp": "2023-11-14T22:13:20Z"`)) {
		t.Errorf("SOURCE_DATE_EPOCH not honoured: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		env  string
		args []string
		code int
	}{
		{"", []string{"sbom", "--lock", lock, "-o", "text"}, exitcode.Usage},
		{"", []string{"sbom", "--lock", lock, "extra"}, exitcode.Usage},
		{"soon", []string{"sbom", "--lock", lock}, exitcode.Usage},
		{"", []string{"sbom", "--lock", filepath.Join(t.TempDir(), "none.lock")}, exitcode.NotFound},
	} {
		if code, _, stderr := run(tc.env, tc.args...); code != tc.code {
			t.Errorf("%v (SOURCE_DATE_EPOCH=%q): exit %d, want %d: %s", tc.args, tc.env, code, tc.code, stderr)
		}
	}
}
