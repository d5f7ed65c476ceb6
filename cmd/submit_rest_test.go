package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// passThroughRoot is a command tree whose submit hands the args on
// unchanged (these tests have no --packages and follow only the REST
// backend).
func passThroughRoot() *cobra.Command {
	return newRoot(withPrepare(func(ctx context.Context, sub *submit.Submission, o pipeline.Options) (*pipeline.Result, error) {
		return &pipeline.Result{Result: &rewrite.Result{Submission: sub}}, nil
	}))
}

func restMaster(t *testing.T, fake *sparkresttest.Server) string {
	t.Helper()
	s := httptest.NewServer(fake)
	t.Cleanup(s.Close)
	return "spark://" + strings.TrimPrefix(s.URL, "http://")
}

// TestSubmitRESTEndToEnd runs `prebake submit` against the fake standalone
// master and checks the exit codes: 0 for FINISHED, 80 for FAILED.
func TestSubmitRESTEndToEnd(t *testing.T) {
	tests := []struct {
		end      string
		wantCode int
		output   string
	}{
		{"FINISHED", 0, "text"},
		{"FAILED", exitcode.DriverFailed, "json"},
	}
	for _, tt := range tests {
		t.Run(tt.end, func(t *testing.T) {
			fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"},
				sparkresttest.Step{State: "RUNNING", WorkerID: "worker-1", WorkerHostPort: "127.0.0.1:40000"},
				sparkresttest.Step{State: tt.end, WorkerID: "worker-1", WorkerHostPort: "127.0.0.1:40000"}))
			master := restMaster(t, fake)
			var stdout, stderr bytes.Buffer
			code := execute(context.Background(), passThroughRoot(), []string{"submit", "-o", tt.output, "--poll-interval", "10ms", "--",
				"--master", master, "--deploy-mode", "cluster", "--class", "com.example.Main", "hdfs:///app.jar", "arg1"}, &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), "is RUNNING on worker-1 (127.0.0.1:40000)") {
				t.Errorf("stderr lacks the transition:\n%s", stderr.String())
			}
			if tt.output == "json" {
				var res struct {
					SubmissionID string `json:"submissionId"`
					State        string `json:"state"`
					ExitCode     int    `json:"exitCode"`
					Source       string `json:"source"`
					Reason       string `json:"reason"`
					Timings      struct {
						TotalSeconds float64 `json:"totalSeconds"`
					} `json:"timings"`
				}
				if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, stdout.String())
				}
				if res.State != tt.end || res.ExitCode != tt.wantCode || res.Source != exitcode.SourceDriver || res.Reason != tt.end || !strings.HasPrefix(res.SubmissionID, "driver-") {
					t.Errorf("json result %+v", res)
				}
			} else if !strings.Contains(stdout.String(), " FINISHED exit=0 source=driver") {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}

func TestStatusKillAndPollOnlyREST(t *testing.T) {
	fake := sparkresttest.New()
	master := restMaster(t, fake)
	id := "driver-20261129101010-0001"
	fake.AddDriver(id, sparkresttest.Step{State: "RUNNING", WorkerID: "worker-1", Polls: 3}, sparkresttest.Step{State: "FINISHED"})
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := execute(context.Background(), passThroughRoot(), args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errs := run("status", id, "--master", master); code != 0 || !strings.Contains(out, id+" RUNNING worker-1") {
		t.Errorf("status: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := run("submit", "--status-poll-only", id, "--poll-interval", "10ms", "--", "--master", master); code != 0 || !strings.Contains(out, id+" FINISHED exit=0") {
		t.Errorf("poll-only: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := run("kill", id, "--master", master); code != exitcode.NotFound || !strings.Contains(errs, "has already finished or does not exist") {
		t.Errorf("kill of a finished driver: exit %d %q", code, errs)
	}
	if code, out, errs := run("status", "driver-nope", "--master", master); code != exitcode.NotFound || out != "" {
		t.Errorf("status of an unknown id: exit %d, stdout %q (want nothing) %q", code, out, errs)
	}
}

// TestSubmitMasterFromEnv: prebake submit takes the master and the deploy
// mode as spark-submit does, $MASTER and $DEPLOY_MODE included, so a
// command line without --master and --deploy-mode still goes to the REST
// backend in cluster mode.
func TestSubmitMasterFromEnv(t *testing.T) {
	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"}, sparkresttest.Step{State: "FINISHED"}))
	t.Setenv("MASTER", restMaster(t, fake))
	t.Setenv("DEPLOY_MODE", "cluster")
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := execute(context.Background(), passThroughRoot(), []string{"submit", "--poll-interval", "10ms", "--",
		"--class", "com.example.Main", "hdfs:///app.jar"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), " FINISHED exit=0 source=driver") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}
