package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/submit"
)

// readmeExitRow is one row of the README's exit-code table.
type readmeExitRow struct {
	Codes   string // as written: "64", "1–63, 101, 126–255"
	Meaning string
}

// readmeExitTable parses the table under docs/exit-codes.md's "# Exit codes"
// heading: | code | meaning | when |.
func readmeExitTable(t *testing.T) []readmeExitRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "exit-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []readmeExitRow
	in, header := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
			if in && header {
				return rows
			}
			in = line == "# Exit codes"
			continue
		case !in || !strings.HasPrefix(line, "|"):
			if in && header && len(rows) > 0 {
				return rows
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !header {
			if diff := cmp.Diff([]string{"code", "meaning", "when"}, cells); diff != "" {
				t.Fatalf("README exit-code table header (-want +got):\n%s", diff)
			}
			header = true
			continue
		}
		if strings.Trim(cells[0], "-: ") == "" {
			continue // the |---| separator
		}
		if len(cells) != 3 {
			t.Fatalf("README exit-code row %q: want 3 cells", line)
		}
		rows = append(rows, readmeExitRow{Codes: cells[0], Meaning: cells[1]})
	}
	if len(rows) == 0 {
		t.Fatal("docs/exit-codes.md has no table under \"# Exit codes\"")
	}
	return rows
}

// expandCodes turns "1–63, 101, 126–255" into its codes.
func expandCodes(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "–")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			t.Fatalf("exit-code cell %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				t.Fatalf("exit-code cell %q: %v", s, err)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

// TestExitCodeTableMatchesREADME checks that the README's table is exactly
// internal/exitcode: every prebake code with its Meaning, and the driver's
// pass-through range.
func TestExitCodeTableMatchesREADME(t *testing.T) {
	prebakeCodes := map[int]bool{
		exitcode.OK: true, exitcode.Usage: true, exitcode.DataErr: true, exitcode.NotFound: true,
		exitcode.Unavailable: true, exitcode.Internal: true, exitcode.CantCreate: true, exitcode.Timeout: true,
		exitcode.RateLimited: true, exitcode.NoPerm: true, exitcode.StaleLock: true, exitcode.Hung: true, exitcode.DriverFailed: true,
	}
	got := map[int]string{}
	var passThrough []int
	for _, r := range readmeExitTable(t) {
		codes := expandCodes(t, r.Codes)
		for _, c := range codes {
			if _, dup := got[c]; dup {
				t.Errorf("code %d is in the README table twice", c)
			}
			got[c] = r.Meaning
			if !prebakeCodes[c] {
				passThrough = append(passThrough, c)
			}
		}
		if len(codes) > 1 {
			for _, c := range codes {
				if prebakeCodes[c] {
					t.Errorf("row %q: prebake's own code %d is in a range row", r.Codes, c)
				}
			}
		}
	}
	want := map[int]string{}
	for c := range prebakeCodes {
		want[c] = codeMeaning(c)
	}
	// The driver's own codes: every other code a shell carries, 1–255.
	for c := 1; c <= 255; c++ {
		if !prebakeCodes[c] {
			want[c] = codeMeaning(c)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README exit-code table vs internal/exitcode (-code +README):\n%s", diff)
	}
	if len(passThrough) != 255-12 {
		t.Errorf("README pass-through codes: %d, want 243 (1–255 but prebake's 12)", len(passThrough))
	}
}

// TestDriverCodesPassThrough: a driver's exit code is passed through
// unchanged unless it is one of prebake's own (finding 10 of review 3: a
// driver's 99 became 80, so BashOperator's skip_on_exit_code never fired).
func TestDriverCodesPassThrough(t *testing.T) {
	for c := 0; c <= 256; c++ {
		own := c >= 0 && c <= 255 && exitcode.Own(c)
		if got, want := submit.PassesThrough(c), c >= 1 && c <= 255 && !own; got != want {
			t.Errorf("submit.PassesThrough(%d) = %v, want %v (exitcode.Own: %v)", c, got, want, own)
		}
		err := submit.DriverExit(c, "spark-submit exited")
		want := c
		switch {
		case c == 0:
		case own, c > 255:
			want = exitcode.DriverFailed
		}
		if got := exitcode.Code(err); got != want {
			t.Errorf("driver exit %d: prebake exits %d, want %d", c, got, want)
		}
		if c != 0 && exitcode.SourceOf(err) != exitcode.SourceDriver {
			t.Errorf("driver exit %d: source %q, want driver", c, exitcode.SourceOf(err))
		}
	}
}

// runPrebake executes the CLI in-process.
func runPrebake(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := ExecuteContext(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// isolatedCLI returns the checkout's root and a temp dir, with prebake's
// environment (default cache, store, image target, config) pointing into it
// or unset, so that in-process runs see nothing of the machine's.
func isolatedCLI(t *testing.T) (root, tmp string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp = t.TempDir()
	t.Setenv("PREBAKE_CACHE", filepath.Join(tmp, "default-cache"))
	t.Setenv("PREBAKE_STORE", "")
	t.Setenv("PREBAKE_IMAGE_TARGET", "")
	t.Setenv("PREBAKE_CONFIG", "")
	return root, tmp
}

// TestExitCodesFromCLI produces one representative failure per code that
// needs no external server and checks the exit code and the message.
func TestExitCodesFromCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	cache := filepath.Join(tmp, "cache")
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", cache}
	with := func(extra ...string) []string { return append(append([]string{}, demo...), extra...) }

	lock := filepath.Join(tmp, "prebake.lock")
	if code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "-q", "--lock", lock}, with("org.slf4j:slf4j-api:2.0.7")...)...); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	badLock := filepath.Join(tmp, "bad.lock")
	if err := os.WriteFile(badLock, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	aFile := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(aFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
		want int
		msg  string // in stderr
	}{
		{"usage: unknown flag", []string{"resolve", "--no-such-flag"}, exitcode.Usage, "unknown flag: --no-such-flag"},
		{"usage: bad -o", []string{"inspect", "-o", "yaml", "oci:x"}, exitcode.Usage, `-o "yaml"`},
		{"usage: unsupported master", []string{"submit", "--", "--master", "nomad://n1:4646", "app.jar"}, exitcode.Usage, `--master "nomad://n1:4646"`},
		{"usage: cluster mode without image or store", append(append([]string{"rewrite"}, demo...), "--", "--master", "k8s://https://k8s.example:6443",
			"--deploy-mode", "cluster", "--packages", "org.slf4j:slf4j-api:2.0.7", "local:///opt/app.jar"), exitcode.Usage, "give --image-from or --store"},
		{"data: malformed coordinate", append([]string{"resolve"}, with("org.slf4j-slf4j-api")...), exitcode.DataErr, "groupId:artifactId:version"},
		{"data: malformed lock", []string{"bake", "s3", "--store", "file://" + filepath.Join(tmp, "store"), "--lock", badLock}, exitcode.DataErr, badLock},
		{"not found: module", append([]string{"resolve"}, with("org.example:no-such-module:1.0")...), exitcode.NotFound, "unresolved dependency: org.example#no-such-module;1.0"},
		{"not found: lock", []string{"bake", "s3", "--store", "file://" + filepath.Join(tmp, "store"), "--lock", filepath.Join(tmp, "missing.lock")}, exitcode.NotFound, "missing.lock"},
		{"not found: image", []string{"inspect", "oci:" + filepath.Join(tmp, "no-image")}, exitcode.NotFound, "no-image"},
		{"cannot create: cache under a file", []string{"resolve", "--no-default-repositories", "--repositories", demo[2], "--cache", filepath.Join(aFile, "cache"), "org.slf4j:slf4j-api:2.0.7"}, exitcode.CantCreate, "a-file"},
		{"stale lock with --frozen", append([]string{"resolve", "--lock", lock, "--frozen"}, with("ch.qos.logback:logback-core:1.4.11")...), exitcode.StaleLock, "stale (--frozen)"},
		{"stale lock: --frozen without --lock", append([]string{"resolve", "--frozen"}, with("org.slf4j:slf4j-api:2.0.7")...), exitcode.StaleLock, "--frozen needs --lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runPrebake(context.Background(), tt.args...)
			if code != tt.want {
				t.Fatalf("prebake %s: exit %d, want %d (%s)\nstderr:\n%s", strings.Join(tt.args, " "), code, tt.want, codeMeaning(tt.want), stderr)
			}
			if !strings.Contains(stderr, tt.msg) {
				t.Errorf("stderr lacks %q:\n%s", tt.msg, stderr)
			}
		})
	}
}

// TestExitCodesFromSubmitREST covers submit's codes against the in-process
// protocol-faithful standalone master (internal/sparkrest): the driver's
// result, a timeout, a cancel and an unknown submission.
func TestExitCodesFromSubmitREST(t *testing.T) {
	t.Setenv("PREBAKE_CACHE", t.TempDir())
	t.Setenv("PREBAKE_STORE", "")
	t.Setenv("PREBAKE_CONFIG", "")
	master := func(steps ...sparkresttest.Step) (string, *sparkresttest.Server) {
		fake := sparkresttest.New(sparkresttest.WithScript(steps...))
		s := httptest.NewServer(fake)
		t.Cleanup(s.Close)
		return "spark://" + strings.TrimPrefix(s.URL, "http://"), fake
	}
	submitArgs := func(m string, extra ...string) []string {
		args := append([]string{"submit", "-o", "json", "--poll-interval", "10ms"}, extra...)
		return append(args, "--", "--master", m, "--deploy-mode", "cluster", "--class", "com.example.Main", "hdfs:///app.jar")
	}
	type result struct {
		ExitCode int    `json:"exitCode"`
		Source   string `json:"source"`
		Reason   string `json:"reason"`
	}
	tests := []struct {
		name   string
		steps  []sparkresttest.Step
		extra  []string
		cancel time.Duration
		want   result
		// hint is in the JSON message and the error on stderr: the library
		// names its option, the CLI the flag.
		hint string
	}{
		{"driver finished", []sparkresttest.Step{{State: "RUNNING"}, {State: "FINISHED"}}, nil, 0, result{exitcode.OK, exitcode.SourceDriver, "FINISHED"}, ""},
		{"driver failed", []sparkresttest.Step{{State: "RUNNING"}, {State: "FAILED"}}, nil, 0, result{exitcode.DriverFailed, exitcode.SourceDriver, "FAILED"}, ""},
		{"timeout", []sparkresttest.Step{{State: "RUNNING", Polls: 1 << 20}}, []string{"--timeout", "300ms"}, 0, result{exitcode.Timeout, exitcode.SourcePrebake, "Timeout"},
			"reached with the driver RUNNING (left running; stop it with: prebake kill driver-"},
		{"cancel", []sparkresttest.Step{{State: "RUNNING", Polls: 1 << 20}}, nil, 300 * time.Millisecond, result{exitcode.DriverFailed, exitcode.SourcePrebake, "Cancelled"}, ""},
		{"cancel, driver kept", []sparkresttest.Step{{State: "RUNNING", Polls: 1 << 20}}, []string{"--kill-on-cancel=false"}, 300 * time.Millisecond,
			result{exitcode.DriverFailed, exitcode.SourcePrebake, "Cancelled"}, "is left running; as --kill-on-cancel=false asks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := master(tt.steps...)
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			code, stdout, stderr := runPrebake(ctx, submitArgs(m, tt.extra...)...)
			var got result
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("exit %d; stdout is not JSON (%v):\n%s\nstderr:\n%s", code, err, stdout, stderr)
			}
			if code != tt.want.ExitCode {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tt.want.ExitCode, stderr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("JSON result (-want +got):\n%s", diff)
			}
			if tt.hint == "" {
				return
			}
			var msg struct{ Message string }
			_ = json.Unmarshal([]byte(stdout), &msg)
			if !strings.Contains(msg.Message, tt.hint) || !strings.Contains(stderr, tt.hint) || (code == exitcode.Timeout && !strings.HasSuffix(msg.Message, "; the limit is --timeout")) {
				t.Errorf("want %q in the JSON message %q and on stderr:\n%s", tt.hint, msg.Message, stderr)
			}
		})
	}
	t.Run("unknown submission", func(t *testing.T) {
		m, _ := master()
		code, _, stderr := runPrebake(context.Background(), "status", "driver-20260101000000-9999", "--master", m)
		if code != exitcode.NotFound {
			t.Errorf("status of an unknown id: exit %d, want %d\n%s", code, exitcode.NotFound, stderr)
		}
	})
	t.Run("REST disabled", func(t *testing.T) {
		// A port where nothing listens: the REST server is off on the master.
		l := httptest.NewServer(nil)
		addr := strings.TrimPrefix(l.URL, "http://")
		l.Close()
		code, _, stderr := runPrebake(context.Background(), "status", "driver-1", "--master", "spark://"+addr)
		if code != exitcode.Unavailable || !regexp.MustCompile(`spark\.master\.rest\.enabled=true.*or give its port if it listens elsewhere; flag --rest-port`).MatchString(stderr) {
			t.Errorf("status with no REST server: exit %d, want %d and the fix\n%s", code, exitcode.Unavailable, stderr)
		}
	})
}

// TestEveryCommandHasExample checks that `--help` shows examples for every
// command (README "Usage"), and that shell completion works for bash, zsh
// and fish. It lives here because README-facing CLI checks share this file.
func TestEveryCommandHasExample(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "completion" || sub.Name() == "help" {
				continue
			}
			n++
			path := strings.Fields(sub.CommandPath())[1:]
			code, stdout, stderr := runPrebake(context.Background(), append(path, "--help")...)
			if code != 0 {
				t.Errorf("%s --help: exit %d\n%s", sub.CommandPath(), code, stderr)
			}
			if sub.Example == "" || !strings.Contains(stdout, "Examples:\n") {
				t.Errorf("%s --help shows no examples:\n%s", sub.CommandPath(), stdout)
			}
			walk(sub)
		}
	}
	walk(NewRoot())
	if n < 11 {
		t.Errorf("walked %d commands; want resolve, rewrite, bake, bake image, bake s3, inspect, warm, gc, submit, status, kill at least", n)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, stdout, stderr := runPrebake(context.Background(), "completion", shell)
		if code != 0 || !strings.Contains(stdout, "prebake") || len(stdout) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", shell, code, len(stdout), stderr)
		}
	}
}
