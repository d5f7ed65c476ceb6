package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
)

// exitingSparkSubmit writes a spark-submit that prints a line on stdout,
// as a driver does, and exits with its last argument (the walkthrough's
// fail_app.py N).
func exitingSparkSubmit(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "spark-submit")
	script := "#!/bin/sh\necho 'app says hello'\nfor a; do last=$a; done\nexit $last\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// localSubmitJSON is the part of submit's local result the tests read.
type localSubmitJSON struct {
	Backend        string `json:"backend"`
	Master         string `json:"master"`
	ExitCode       int    `json:"exitCode"`
	DriverExitCode *int   `json:"driverExitCode"`
	Source         string `json:"source"`
	Timings        struct {
		TotalSeconds *float64 `json:"totalSeconds"`
	} `json:"timings"`
}

// TestAirflowResults reproduces findings 6 and 10 of review 3 as the
// walkthrough ran them: BashOperator's XCom (stdout's last line) of
// `submit -o json` was "}", `--result-file` without -o json held only the
// exit code with source "prebake" though the driver ran, and a driver's
// exit 99 became 80 (skip_on_exit_code never fired).
func TestAirflowResults(t *testing.T) {
	_, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	bin := exitingSparkSubmit(t, tmp)
	submitArgs := func(flags []string, code string) []string {
		return append(append([]string{"submit", "--spark-submit", bin}, flags...), "--", "--master", "local[2]", "fail_app.py", code)
	}
	intp := func(i int) *int { return &i }
	for _, tt := range []struct {
		name  string
		flags []string
		app   string // the driver's exit code
		code  int    // prebake's
		want  localSubmitJSON
	}{
		{"success", nil, "0", 0, localSubmitJSON{Backend: "spark-submit", Master: "local[2]", ExitCode: 0, DriverExitCode: intp(0), Source: "driver"}},
		{"driver exit 7", nil, "7", 7, localSubmitJSON{Backend: "spark-submit", Master: "local[2]", ExitCode: 7, DriverExitCode: intp(7), Source: "driver"}},
		{"driver exit 99 passes through", []string{"-q"}, "99", 99, localSubmitJSON{Backend: "spark-submit", Master: "local[2]", ExitCode: 99, DriverExitCode: intp(99), Source: "driver"}},
		{"driver exit 66, one of prebake's own", nil, "66", exitcode.DriverFailed, localSubmitJSON{Backend: "spark-submit", Master: "local[2]", ExitCode: 80, DriverExitCode: intp(66), Source: "driver"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// -o json: one line, the whole object, as the last line of stdout.
			code, out, errs := runPrebake(context.Background(), submitArgs(append([]string{"-o", "json"}, tt.flags...), tt.app)...)
			if code != tt.code {
				t.Fatalf("-o json: exit %d, want %d\n%s", code, tt.code, errs)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			var got localSubmitJSON
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || len(lines) != 1 {
				t.Fatalf("-o json: stdout is %d lines, last %q (%v); want the one-line result", len(lines), lines[len(lines)-1], err)
			}
			if got.Timings.TotalSeconds == nil {
				t.Errorf("-o json: no timings: %s", out)
			}
			got.Timings.TotalSeconds = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-o json result (-want +got):\n%s", diff)
			}
			// --result-file without -o json: the same full result.
			rf := filepath.Join(tmp, "rf3.json")
			code, out, errs = runPrebake(context.Background(), submitArgs(append([]string{"--result-file", rf}, tt.flags...), tt.app)...)
			if code != tt.code || !strings.Contains(out, "app says hello") {
				t.Fatalf("text: exit %d, want %d; stdout %q\n%s", code, tt.code, out, errs)
			}
			data, err := os.ReadFile(rf)
			if err != nil {
				t.Fatal(err)
			}
			got = localSubmitJSON{}
			if err := json.Unmarshal(data, &got); err != nil || got.Timings.TotalSeconds == nil {
				t.Fatalf("--result-file: %s (%v)", data, err)
			}
			got.Timings.TotalSeconds = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("--result-file with -o text (-want +got):\n%s", diff)
			}
		})
	}
	// -o json-pretty indents the same object.
	code, out, errs := runPrebake(context.Background(), submitArgs([]string{"-o", "json-pretty"}, "0")...)
	var got localSubmitJSON
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || strings.Count(out, "\n") < 5 || got.Source != "driver" {
		t.Errorf("-o json-pretty: exit %d, %v, stdout %q\n%s", code, err, out, errs)
	}
}

// TestCancelLocalKillsProcessGroup reproduces finding 16 of review 3:
// `prebake submit -o json -- --master 'local[1]' sleep_app.py`, then
// SIGTERM (an Airflow task kill), left the app's python process running,
// reparented to PID 1. spark-submit's children now get the signal too.
func TestCancelLocalKillsProcessGroup(t *testing.T) {
	_, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	bin, pidFile := filepath.Join(tmp, "spark-submit"), filepath.Join(tmp, "python.pid")
	// java (this shell) starts the python driver (sleep) and waits for it;
	// SIGTERM ends the shell, as it ends the JVM, not its child.
	script := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\necho started >&2\nwait\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	type run struct {
		code     int
		out, err string
	}
	done := make(chan run, 1)
	go func() {
		code, out, errs := runPrebake(ctx, "submit", "-o", "json", "--spark-submit", bin, "--", "--master", "local[1]", "sleep_app.py")
		done <- run{code, out, errs}
	}()
	var pid int
	deadline := time.Now().Add(20 * time.Second)
	for pid == 0 {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake driver never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	cancel()
	r := <-done
	var res localSubmitJSON
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != exitcode.DriverFailed || res.Source != "prebake" {
		t.Errorf("cancel: exit %d, stdout %q (%v)\n%s", r.code, r.out, err, r.err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the driver's child %d still runs after the cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}
