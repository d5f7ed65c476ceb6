package k8s

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSubmitNoWaitIT is issue 31's "submit without waiting": with the
// user's spark.kubernetes.submission.waitAppCompletion=false (argv or a
// properties file) prebake returns once the driver pod exists, with no
// node to run it (no kubelet script: it stays Pending), for the native and
// the spark-submit creators: phase Submitted, exit 0, source prebake, and
// the namespace:pod a status poll takes next.
func TestSubmitNoWaitIT(t *testing.T) {
	e := newITEnv(t)
	grantOwned(t, e)
	native := func(o *options) {
		o.submitter, o.driverSparkVersion, o.sparkSubmit = SubmitterNative, "3.5.9", "/nonexistent/spark-submit"
	}
	props := filepath.Join(t.TempDir(), "nowait.conf")
	if err := os.WriteFile(props, []byte("spark.kubernetes.submission.waitAppCompletion  False\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ns   string
		opts func(*options)
		conf []string
	}{
		{"native argv", "nowait-nat", native, []string{"--conf", "spark.kubernetes.submission.waitAppCompletion=false"}},
		{"native properties file", "nowait-natp", native, []string{"--properties-file", props}},
		{"spark-submit argv", "nowait-ss", nil, []string{"--conf", "spark.kubernetes.submission.waitAppCompletion=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.c.EnsureNamespace(t, tc.ns)
			start := time.Now()
			r := e.submit(t, itRun{ns: tc.ns, opts: tc.opts, conf: tc.conf})
			took := time.Since(start)
			if r.err != nil {
				t.Fatalf("err = %v\n%s", r.err, r.stderr)
			}
			var js struct {
				SubmissionID, Namespace, Pod, Phase, Source string
				ExitCode                                    int
			}
			if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
				t.Fatal(err)
			}
			if js.Phase != PhaseSubmitted || js.ExitCode != 0 || js.SubmissionID != tc.ns+":"+js.Pod || js.Namespace != tc.ns {
				t.Errorf("result %s", r.stdout)
			}
			if took > 20*time.Second { // the pending timeout is 30s
				t.Errorf("took %s: it waited", took)
			}
			if !strings.Contains(r.stderr, "not waiting") {
				t.Errorf("stderr lacks the not-waiting line:\n%s", r.stderr)
			}
			pod, err := e.c.Admin.CoreV1().Pods(tc.ns).Get(context.Background(), js.Pod, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("driver pod %s: %v", js.SubmissionID, err)
			}
			t.Logf("%s: submitted %s in %s (pod phase %q)", tc.name, js.SubmissionID, took.Round(time.Millisecond), pod.Status.Phase)
		})
	}
}

func TestNoWait(t *testing.T) {
	for _, tt := range []struct {
		conf map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"spark.kubernetes.submission.waitAppCompletion": "true"}, false},
		{map[string]string{"spark.kubernetes.submission.waitAppCompletion": "false"}, true},
		{map[string]string{"spark.kubernetes.submission.waitAppCompletion": " FALSE "}, true},
		{map[string]string{"spark.kubernetes.submission.waitAppCompletion": "no"}, false},
	} {
		if got := (&k8sArgs{conf: tt.conf}).noWait(); got != tt.want {
			t.Errorf("noWait(%v) = %v, want %v", tt.conf, got, tt.want)
		}
	}
}
