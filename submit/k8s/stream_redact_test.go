package k8s

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Output prebake streams from others (spark-submit's own output, the
// driver's log with -v) is redacted line by line, as the tails are
// (security review, finding 10).
func TestStreamedOutputRedacted(t *testing.T) {
	secretLines := []string{
		"args: --conf spark.kubernetes.authenticate.submission.oauthToken=K8STOKENsecret --conf spark.hadoop.fs.s3a.secret.key=S3ASECRET",
		"Exception: https://user:PWINLOG@h.example/x?X-Amz-Signature=SIGINLOG",
		"GET https://bob:pa/ss@repo.example/a.pom: Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.BEARERSECRET",
		// audit 3 N11: the forms that were not caught
		`{"password": "JSONSECRET2", "token":"JSONSECRET3"}`,
		"password: LOGSECRET4",
		"(spark.hadoop.fs.s3a.secret.key,TUPLESECRET4)",
	}
	secrets := []string{"K8STOKENsecret", "S3ASECRET", "PWINLOG", "SIGINLOG", "pa/ss", "BEARERSECRET", "JSONSECRET2", "JSONSECRET3", "LOGSECRET4", "TUPLESECRET4"}
	redacted := []string{"oauthToken=xxxxx", "s3a.secret.key=xxxxx", "https://h.example/x?REDACTED", "https://repo.example/a.pom", "Bearer xxxxx",
		`{"password": "xxxxx", "token":"xxxxx"}`, "password: xxxxx", "(spark.hadoop.fs.s3a.secret.key,xxxxx)"}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) string // the stderr prebake wrote
	}{
		{"spark-submit output", func(t *testing.T) string {
			bin := filepath.Join(t.TempDir(), "spark-submit")
			script := "#!/bin/sh\n"
			for _, l := range secretLines {
				script += "echo '" + l + "' >&2\n"
			}
			script += "printf 'no newline at the end s3a.secret.key=S3ASECRET'\nexit 0\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			if _, _, err := runSparkSubmit(context.Background(), &options{sparkSubmit: bin, stderr: &stderr}, nil); err != nil {
				t.Fatal(err)
			}
			return stderr.String()
		}},
		{"driver log with -v", func(t *testing.T) string {
			cs := fake.NewClientset()
			var mu sync.Mutex
			gets := 0
			cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				gets++
				if gets < 3 {
					return true, podIn(corev1.PodRunning, running(driverC)), nil
				}
				return true, podIn(corev1.PodSucceeded, terminated(driverC, 0, "Completed")), nil
			})
			var stderr strings.Builder
			o := &options{pollInterval: 2 * time.Millisecond, pendingTimeout: time.Second, hungGrace: time.Minute,
				notFoundGrace: time.Second, apiRetryTimeout: time.Minute, logTail: 5, verbose: true, stderr: &stderr}
			o = mustOptions(t, use(*o))
			w := &driverWatch{client: cs, logs: &fakeLogs{data: logsWithTS(secretLines...)}, ns: "ns", pod: "app-driver", o: o, now: time.Now}
			res := &Result{Backend: "k8s", Timings: Timings{Started: time.Now()}}
			if err := w.run(context.Background(), res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), "driver| ") {
				t.Fatalf("no driver log streamed:\n%s", stderr.String())
			}
			return stderr.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.run(t)
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("%q streamed:\n%s", s, out)
				}
			}
			for _, r := range redacted {
				if !strings.Contains(out, r) {
					t.Errorf("%q missing from the streamed output:\n%s", r, out)
				}
			}
		})
	}
}
