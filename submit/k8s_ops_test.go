package submit

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestK8sKillJSON: `kill -o json` prints JSON (the deleted driver pods, as
// `status -o json` shows them), never spark-submit's text lines, also when
// nothing matches (an empty array and exit 66).
func TestK8sKillJSON(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Namespace: "ns", Labels: map[string]string{"spark-role": "driver"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, tt := range []struct {
		id       string
		wantCode int
		wantPods []string
	}{
		{"ns:app-driver", exitcode.OK, []string{"ns:app-driver"}},
		{"ns:app-*", exitcode.OK, []string{"ns:app-driver"}},
		{"ns:missing", exitcode.NotFound, []string{}},
	} {
		t.Run(tt.id, func(t *testing.T) {
			var stdout bytes.Buffer
			o := K8sIDOptions{Output: "json", Stdout: &stdout, client: fake.NewClientset(pod.DeepCopy())}
			err := K8sKill(context.Background(), "k8s://https://127.0.0.1:6443", tt.id, o)
			if got := exitcode.Code(err); got != tt.wantCode {
				t.Fatalf("exit %d, want %d: %v", got, tt.wantCode, err)
			}
			var got []DriverStatus
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("stdout is not JSON (%v):\n%s", err, stdout.String())
			}
			ids := []string{}
			for _, s := range got {
				ids = append(ids, s.SubmissionID)
				if !s.Deleting {
					t.Errorf("%s: deleting false", s.SubmissionID)
				}
			}
			if d := cmp.Diff(tt.wantPods, ids); d != "" {
				t.Errorf("killed (-want +got):\n%s", d)
			}
		})
	}
}
