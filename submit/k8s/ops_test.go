package k8s

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/prebake/prebake/errdefs"
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
		wantKind errdefs.Kind // errdefs.Unknown: no error
		wantPods []string
	}{
		{"ns:app-driver", errdefs.Unknown, []string{"ns:app-driver"}},
		{"ns:app-*", errdefs.Unknown, []string{"ns:app-driver"}},
		{"ns:missing", errdefs.NotFound, []string{}},
	} {
		t.Run(tt.id, func(t *testing.T) {
			o := options{client: fake.NewClientset(pod.DeepCopy())}
			tried, err := killWith(context.Background(), "k8s://https://127.0.0.1:6443", tt.id, use(o))
			checkKind(t, err, tt.wantKind)
			ids := []string{} // what kill -o json prints: the deleted ones
			for _, s := range tried {
				if !s.Deleting {
					t.Errorf("%s: deleting false", s.SubmissionID)
					continue
				}
				ids = append(ids, s.SubmissionID)
			}
			if d := cmp.Diff(tt.wantPods, ids); d != "" {
				t.Errorf("killed (-want +got):\n%s", d)
			}
		})
	}
}

// TestK8sStatusRetriesTransientErrors: status and kill retry 5xx answers a
// few times (as the exit-code table's "after retries" says) and give up with
// 69; a 403 is final at once.
func TestK8sStatusRetriesTransientErrors(t *testing.T) {
	fast := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Namespace: "ns", Labels: map[string]string{"spark-role": "driver"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, tt := range []struct {
		name      string
		failures  int
		err       error
		wantKind  errdefs.Kind // errdefs.Unknown: no error
		wantCalls int
	}{
		{"two 503s then ok", 2, apierrors.NewServiceUnavailable("etcd"), errdefs.Unknown, 3},
		{"503 forever", 100, apierrors.NewServiceUnavailable("etcd"), errdefs.Unavailable, 4},
		{"403 is final", 100, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "app-driver", nil), errdefs.Denied, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(pod.DeepCopy())
			calls := 0
			cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls <= tt.failures {
					return true, nil, tt.err
				}
				return false, nil, nil
			})
			_, err := statusWith(context.Background(), "k8s://https://127.0.0.1:6443", "ns:app-driver", use(options{client: cs, retryBackoff: fast}))
			checkKind(t, err, tt.wantKind)
			if calls != tt.wantCalls {
				t.Errorf("%d GETs, want %d", calls, tt.wantCalls)
			}
		})
	}
}
