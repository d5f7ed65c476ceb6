package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/testenv"
)

// TestSubmitBatchCLI: `submit --batch FILE` refuses a bad file before it
// submits anything (65 naming the line, 66 missing, 64 with an argv too or
// a bad --parallel), and reports one result per line with -o json, its
// exit code the highest of them (69: no API server).
func TestSubmitBatchCLI(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", tmp)
	t.Setenv("PREBAKE_CACHE", filepath.Join(tmp, "cache"))
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	t.Setenv("KUBECONFIG", filepath.Join(tmp, "none"))
	master := fmt.Sprintf("k8s://https://127.0.0.1:%d", testenv.FreePort(t)) // nothing listens
	line := func(name string) string {
		b, _ := json.Marshal([]string{"--master", master, "--deploy-mode", "cluster", "--name", name,
			"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9",
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken=batch-secret-token",
			"--class", "org.example.Main", "local:///opt/app.jar"})
		return string(b)
	}
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jsonl", "# two applications\n"+line("a")+"\n\n"+line("b")+"\n")
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"not JSON", []string{"--batch", write("bad.jsonl", line("a")+"\n--master k8s://x\n")}, exitcode.DataErr, "bad.jsonl line 2: want a JSON array"},
		{"not k8s cluster", []string{"--batch", write("local.jsonl", line("a")+"\n[\"--master\",\"local[2]\",\"x.py\"]\n")}, exitcode.DataErr, "local.jsonl line 2: master local[2]"},
		{"missing", []string{"--batch", filepath.Join(tmp, "nope.jsonl")}, exitcode.NotFound, "nope.jsonl"},
		{"argv too", []string{"--batch", good, "--", "--master", master}, exitcode.Usage, "give one of them"},
		{"parallel", []string{"--batch", good, "--parallel", "0"}, exitcode.Usage, "--parallel 0"},
		{"other submitter", []string{"--batch", good, "--submitter", "spark-submit"}, exitcode.Usage, "--submitter native only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := ExecuteContext(context.Background(), append([]string{"submit"}, tt.args...), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr.String(), tt.stderr)
			}
		})
	}

	var stdout, stderr bytes.Buffer
	code := ExecuteContext(context.Background(), []string{"-o", "json", "submit", "--batch", good, "--parallel", "2"}, &stdout, &stderr)
	if code != exitcode.Unavailable {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Unavailable, stdout.String(), stderr.String())
	}
	var got struct {
		Submitted, Failed, ExitCode int
		Results                     []struct {
			Line         int
			ExitCode     int
			SubmissionID string
			Reason       string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if got.Submitted != 0 || got.Failed != 2 || got.ExitCode != exitcode.Unavailable || len(got.Results) != 2 {
		t.Fatalf("result %s", stdout.String())
	}
	var lines []int
	for i, r := range got.Results {
		lines = append(lines, r.Line)
		if r.ExitCode != exitcode.Unavailable || r.Reason != "SubmitFailed" || !strings.HasPrefix(r.SubmissionID, "default:"+string(rune('a'+i))+"-") {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if diff := cmp.Diff([]int{2, 4}, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if strings.Contains(stdout.String()+stderr.String(), "batch-secret-token") {
		t.Errorf("the token is printed")
	}
}
