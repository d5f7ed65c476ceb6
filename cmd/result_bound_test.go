package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// boundedAPI is an API server (plain http) with the audit's hostile texts
// (security-4 M2): driver pod default/drv Failed, exit 3, its termination
// message 50 KB with a password and a bearer token; and every
// SparkApplication it is given FAILED with a 200 KB errorMessage holding
// the same.
func boundedAPI(t *testing.T, term, opMsg string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p := r.URL.Path
		switch {
		case r.Method == http.MethodGet && p == "/api/v1/namespaces/default/pods/drv":
			json.NewEncoder(w).Encode(map[string]any{
				"kind": "Pod", "apiVersion": "v1",
				"metadata": map[string]any{"name": "drv", "namespace": "default", "labels": map[string]string{"spark-role": "driver"}},
				"spec":     map[string]any{"containers": []map[string]any{{"name": "spark-kubernetes-driver", "image": "spark"}}},
				"status": map[string]any{"phase": "Failed", "reason": "Error", "message": term, "containerStatuses": []map[string]any{{
					"name": "spark-kubernetes-driver", "ready": false, "restartCount": 0, "image": "spark", "imageID": "",
					"state": map[string]any{"terminated": map[string]any{"exitCode": 3, "reason": "Error", "message": term}},
				}}},
			})
		case strings.HasSuffix(p, "/log"):
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "2026-12-04T00:00:00Z log: "+term+"\n")
		case r.Method == http.MethodGet && p == "/api/v1/namespaces/default/pods":
			io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","items":[]}`)
		case r.Method == http.MethodPost && strings.HasSuffix(p, "/sparkapplications"):
			b, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusCreated)
			w.Write(b)
		case r.Method == http.MethodGet && strings.Contains(p, "/sparkapplications/"):
			name := p[strings.LastIndexByte(p, '/')+1:]
			json.NewEncoder(w).Encode(map[string]any{
				"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
				"metadata": map[string]any{"name": name, "namespace": "default"},
				"status":   map[string]any{"applicationState": map[string]any{"state": "FAILED", "errorMessage": opMsg}},
			})
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestResultsRedactedAndBounded is audit 4 M2: the driver container's
// termination message (50 KB, a password and a bearer token) and the
// operator's errorMessage (200 KB, the same) are redacted and bounded in
// the text output, -o json and --result-file alike.
func TestResultsRedactedAndBounded(t *testing.T) {
	_, tmp := isolatedCLI(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", tmp)
	term := "boom password: LOGSECRET4 token Bearer GOOD-TOKEN-2 " + strings.Repeat("M", 50_000)
	opMsg := "driver container failed with ExitCode: 7, Reason: Error; password: OPSECRET9 token Bearer OPBEARER9 " + strings.Repeat("Z", 200_000)
	api := boundedAPI(t, term, opMsg)
	secrets := []string{"LOGSECRET4", "GOOD-TOKEN-2", "OPSECRET9", "OPBEARER9"}
	common := []string{"--poll-interval", "10ms", "--api-retry-timeout", "2s"}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"driver pod", append(append([]string{"submit", "--status-poll-only", "default:drv"}, common...), "--", "--master", "k8s://"+api), 3},
		{"status", []string{"status", "default:drv", "--master", "k8s://" + api}, 0},
		{"operator", append(append([]string{"submit", "--via", "operator", "--spark-version", "3.5.9", "--timeout", "20s"}, common...),
			"--", "--master", "k8s://"+api, "--deploy-mode", "cluster", "--name", "opy", "--conf", "spark.kubernetes.namespace=default",
			"--conf", "spark.kubernetes.container.image=spark:3.5.9", "local:///opt/app.jar"), 7},
	} {
		for _, out := range []string{"text", "json"} {
			t.Run(tc.name+"/"+out, func(t *testing.T) {
				rf := filepath.Join(t.TempDir(), "result.json")
				args := append([]string{tc.args[0], "-o", out, "--result-file", rf}, tc.args[1:]...)
				code, stdout, stderr := runPrebake(context.Background(), args...)
				if code != tc.wantCode {
					t.Fatalf("exit %d, want %d\n%s", code, tc.wantCode, stderr[:min(len(stderr), 4000)])
				}
				file, err := os.ReadFile(rf)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("exit %d; stdout %d, stderr %d, result file %d bytes", code, len(stdout), len(stderr), len(file))
				for what, s := range map[string]string{"stdout": stdout, "stderr": stderr, "result file": string(file)} {
					for _, secret := range secrets {
						if strings.Contains(s, secret) {
							t.Errorf("%s holds %s", what, secret)
						}
					}
					// Each text at most 4 KiB: message, terminationMessage,
					// containers[].message, logTail, the error line.
					if len(s) > 24<<10 {
						t.Errorf("%s: %d bytes, want it bounded", what, len(s))
					}
				}
				if !(tc.name == "status" && out == "text") && !strings.Contains(string(file), "password: xxxxx") {
					t.Errorf("result file: the redacted message is missing:\n%s", fmt.Sprintf("%.600s", file))
				}
				if tc.name == "status" {
					return // its document is a list (checked above: no secret, bounded)
				}
				var doc struct {
					Message    string `json:"message"`
					Containers []struct {
						Message string `json:"message"`
					} `json:"containers"`
				}
				if err := json.Unmarshal(file, &doc); err != nil {
					t.Fatalf("result file: %v", err)
				}
				msgs := []string{doc.Message}
				for _, c := range doc.Containers {
					msgs = append(msgs, c.Message)
				}
				for _, m := range msgs {
					if len(m) > 4096 {
						t.Errorf("a message of %d bytes in the result file", len(m))
					}
				}
				if tc.name == "driver pod" && (len(doc.Containers) == 0 || !strings.Contains(doc.Containers[0].Message, "bytes, cut to")) {
					t.Errorf("containers[0].message does not say it was cut: %+v", doc.Containers)
				}
			})
		}
	}
}
