package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

// mustLoad is submit.LoadSubmission of args with an empty environment.
func mustLoad(t *testing.T, args []string) *submit.Submission {
	t.Helper()
	sub, err := submit.LoadSubmission(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// fakeSparkSubmit writes a shell script that plays spark-submit for the
// unit tests (the real one runs in local_it_test.go): it records its
// arguments, prints a line to each stream and runs body.
func fakeSparkSubmit(t *testing.T, body string) (bin, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "spark-submit")
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\necho app-stdout\necho 'log: https://u:s3cretPW@repo.example/x' >&2\n" + body + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argsFile
}

// runEnd is what a run's error says (errdefs): its kind, the driver's
// exit code (errdefs.DriverExit) and whether the driver decided it; the
// zero value for success.
type runEnd struct {
	Kind   errdefs.Kind
	Code   int
	Driver bool
}

func endOf(err error) runEnd {
	if err == nil {
		return runEnd{}
	}
	e := errdefs.Outermost(err)
	if e == nil {
		return runEnd{Kind: -1} // unclassified
	}
	return runEnd{e.Kind, e.Code, e.Driver}
}

func TestSubmitLocalExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		want       runEnd
		reason     string
		driverCode int
	}{
		{"success", "exit 0", runEnd{}, "Completed", 0},
		{"app exits 3", "exit 3", runEnd{errdefs.DriverExit, 3, true}, "Error", 3},
		{"main class not found", "exit 101", runEnd{errdefs.DriverExit, 101, true}, "Error", 101},
		{"a code prebake owns", "exit 64", runEnd{errdefs.DriverFailed, 0, true}, "Error", 64},
		{"killed by SIGKILL", "kill -9 $$", runEnd{errdefs.DriverExit, 137, true}, "Error", 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin, argsFile := fakeSparkSubmit(t, tt.body)
			args := []string{"--master", "local[2]", "--jars", "/c/a.jar", "app.py", "--in", "x y"}
			var stdout, stderr bytes.Buffer
			res, err := runSub(context.Background(), mustLoad(t, args), WithSparkSubmit(bin), WithStdio(nil, &stdout, &stderr))
			if got := endOf(err); got != tt.want {
				t.Fatalf("end %+v, want %+v (%v)\n%s", got, tt.want, err, stderr.String())
			}
			if res.Err() != err || res.Reason != tt.reason || res.DriverExitCode == nil || *res.DriverExitCode != tt.driverCode {
				t.Errorf("result %+v", res)
			}
			got, _ := os.ReadFile(argsFile)
			if diff := cmp.Diff(strings.Join(args, "\n")+"\n", string(got)); diff != "" {
				t.Errorf("spark-submit argv (-want +got):\n%s", diff)
			}
			if !strings.Contains(stdout.String(), "app-stdout") {
				t.Errorf("the app's stdout was not passed through: %q", stdout.String())
			}
			if strings.Contains(stderr.String(), "s3cretPW") || !strings.Contains(stderr.String(), "repo.example") {
				t.Errorf("stderr not redacted line by line: %q", stderr.String())
			}
		})
	}
}

func TestSubmitLocalJSON(t *testing.T) {
	bin, _ := fakeSparkSubmit(t, "exit 3")
	var stdout, stderr bytes.Buffer
	res, err := runSub(context.Background(), mustLoad(t, []string{"--master", "spark://u:pw@m:7077", "app.jar"}),
		WithSparkSubmit(bin), WithJSON(true), WithStdio(nil, &stdout, &stderr))
	if endOf(err) != (runEnd{errdefs.DriverExit, 3, true}) || res.Err() != err {
		t.Fatalf("err %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("with JSON, stdout is the result's alone; got %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "app-stdout") {
		t.Errorf("with JSON the app's stdout goes to stderr: %q", stderr.String())
	}
	data, jerr := json.Marshal(res)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"backend": "spark-submit", "driverExitCode": 3.0,
		"reason": "Error", "deployMode": "client", "master": "spark://m:7077"} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v\n%s", k, got[k], want, data)
		}
	}
}

func TestSubmitLocalCancelAndTimeout(t *testing.T) {
	// The script traps SIGTERM as Spark's shutdown hook would, and says so.
	body := `trap 'echo got-sigterm >&2; exit 143' TERM
echo started >&2
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`
	t.Run("cancel", func(t *testing.T) {
		bin, _ := fakeSparkSubmit(t, body)
		ctx, cancel := context.WithCancel(context.Background())
		var stderr testenv.SyncBuffer
		done := make(chan error, 1)
		go func() {
			_, err := runSub(ctx, mustLoad(t, []string{"--master", "local", "app.py"}), WithSparkSubmit(bin), WithStdio(nil, nil, &stderr))
			done <- err
		}()
		waitFor(t, &stderr, "started")
		cancel()
		err := <-done
		if got := endOf(err); got != (runEnd{Kind: errdefs.DriverFailed}) {
			t.Errorf("cancel: %v (%+v)", err, got)
		}
		if !strings.Contains(stderr.String(), "got-sigterm") {
			t.Errorf("spark-submit did not get SIGTERM:\n%s", stderr.String())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		bin, _ := fakeSparkSubmit(t, body)
		var stderr testenv.SyncBuffer
		res, err := runSub(context.Background(), mustLoad(t, []string{"--master", "local", "app.py"}), WithSparkSubmit(bin), WithTimeout(500*time.Millisecond), WithStdio(nil, nil, &stderr))
		if !errors.Is(err, errdefs.Timeout) || res.Reason != "Timeout" || *res.DriverExitCode != 143 {
			t.Errorf("timeout: %v %+v", err, res)
		}
	})
	t.Run("no spark-submit", func(t *testing.T) {
		res, err := runSub(context.Background(), mustLoad(t, []string{"--master", "local", "app.py"}))
		if !errors.Is(err, errdefs.BadArgument) || res.Reason != "NotStarted" {
			t.Errorf("%v %+v", err, res)
		}
	})
}

// waitFor waits until s holds want.
func waitFor(t *testing.T, s *testenv.SyncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSubmitPySparkProgram: WithPySparkProgram runs the program instead of
// spark-submit, with the submission's environment and $PYSPARK_SUBMIT_ARGS
// replaced by the submission's arguments (shell-quoted again: the value the
// environment had is dropped), and passes its exit code through.
func TestSubmitPySparkProgram(t *testing.T) {
	env := map[string]string{"PATH": "/usr/bin:/bin", submit.EnvPySparkSubmitArgs: "--master local[1] --name 'a b' pyspark-shell"}
	sub, err := submit.LoadPySparkSubmission(testenv.Environ(env))
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	res, err := runSub(context.Background(), sub,
		WithPySparkProgram([]string{"/bin/sh", "-c", `printf '%s' "$PYSPARK_SUBMIT_ARGS"; exit 7`}),
		WithStdio(nil, &stdout, nil))
	if got := endOf(err); got != (runEnd{errdefs.DriverExit, 7, true}) {
		t.Errorf("end %+v (%v); want the driver's exit code 7", got, err)
	}
	if want := "--master 'local[1]' --name 'a b' pyspark-shell"; stdout.String() != want {
		t.Errorf("the program saw PYSPARK_SUBMIT_ARGS=%q; want %q", stdout.String(), want)
	}
	if res.Backend != "exec" || res.DriverExitCode == nil || *res.DriverExitCode != 7 {
		t.Errorf("result %+v", res)
	}
}

// runSub runs sub with a backend made of opts.
func runSub(ctx context.Context, sub *submit.Submission, opts ...Option) (*Result, error) {
	b, err := New(opts...)
	if err != nil {
		return nil, err
	}
	return b.run(ctx, sub)
}
