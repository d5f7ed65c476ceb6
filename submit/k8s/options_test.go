package k8s

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/prebake/prebake/errdefs"
)

// use sets all of o at once: in-package tests build the unexported options
// directly (the test seams client and retryBackoff included); makeOptions
// then applies the defaults to what o leaves unset.
func use(o options) Option { return func(p *options) error { *p = o; return nil } }

// TestMakeOptions: each With… sets its option (the last one wins); what
// none sets takes the default its setter documents.
func TestMakeOptions(t *testing.T) {
	defaults := options{pollInterval: 10 * time.Second, pendingTimeout: 10 * time.Minute, hungGrace: 2 * time.Minute,
		notFoundGrace: time.Minute, apiRetryTimeout: 5 * time.Minute, apiCallTimeout: defaultAPICallTimeout, sparkVersion: "3.5.3", killOnCancel: true}
	tests := []struct {
		name string
		opts []Option
		want func(o *options) // applied to defaults
	}{
		{"defaults", nil, func(*options) {}},
		{"all set", []Option{
			WithSparkSubmit("/s/spark-submit"), WithTimeout(time.Hour), WithPollInterval(time.Second),
			WithPendingTimeout(-1), WithHungGrace(3 * time.Second), WithNotFoundGrace(4 * time.Second),
			WithAPIRetryTimeout(5 * time.Second), WithKillHungDriver(true), WithKillOnCancel(true), WithLogTail(7),
			WithVia("operator"), WithOperatorSparkVersion("4.0.1"), WithSubmitter(SubmitterSparkSubmit),
			WithDriverSparkVersion("3.5.9"), WithQuiet(true), WithVerbose(true),
			WithEnviron([]string{"A=b"}), WithInClusterDir("/sa"), WithConf(map[string]string{"k": "v"}), WithGracePeriod(9),
		}, func(o *options) {
			o.sparkSubmit, o.timeout, o.pollInterval, o.pendingTimeout = "/s/spark-submit", time.Hour, time.Second, -1
			o.hungGrace, o.notFoundGrace, o.apiRetryTimeout = 3*time.Second, 4*time.Second, 5*time.Second
			o.killHungDriver, o.killOnCancel, o.logTail, o.via, o.sparkVersion = true, true, 7, "operator", "4.0.1"
			o.submitter, o.driverSparkVersion = SubmitterSparkSubmit, "3.5.9"
			o.quiet, o.verbose, o.environ, o.inClusterDir = true, true, []string{"A=b"}, "/sa"
			o.conf, o.gracePeriod = map[string]string{"k": "v"}, ptr(int64(9))
		}},
		{"last wins", []Option{WithLogTail(1), WithLogTail(2)}, func(o *options) { o.logTail = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := makeOptions(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.stderr != io.Discard {
				t.Errorf("stderr %v: want io.Discard", got.stderr)
			}
			got.stderr = nil // not comparable
			want := defaults
			tt.want(&want)
			if diff := cmp.Diff(want, *got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewRejects: New refuses a bad value or two options that conflict,
// with a bad argument naming the option.
func TestNewRejects(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []Option
		option string
	}{
		{"via", []Option{WithVia("helm")}, "k8s.WithVia"},
		{"submitter", []Option{WithSubmitter("jvm")}, "k8s.WithSubmitter"},
		{"via and native", []Option{WithVia(ViaOperator), WithSubmitter(SubmitterNative)}, "k8s.WithVia"},
		{"negative timeout", []Option{WithTimeout(-time.Second)}, "k8s.WithTimeout"},
		{"negative log tail", []Option{WithLogTail(-1)}, "k8s.WithLogTail"},
		{"negative grace", []Option{WithGracePeriod(-1)}, "k8s.WithGracePeriod"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts...)
			if errdefs.KindOf(err) != errdefs.BadArgument || errdefs.OptionOf(err) != tt.option {
				t.Errorf("New: %v, want a bad argument naming %s", err, tt.option)
			}
		})
	}
}

// TestKillGracePeriod: WithGracePeriod reaches the pod's deletion; without
// it the pod's own grace period applies (none sent).
func TestKillGracePeriod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Namespace: "ns", Labels: map[string]string{"spark-role": "driver"}}}
	for _, tt := range []struct {
		name string
		opts []Option
		want *int64
	}{
		{"default", nil, nil},
		{"set", []Option{WithGracePeriod(0)}, ptr(int64(0))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(pod.DeepCopy())
			var got *metav1.DeleteOptions
			cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				got = ptr(a.(k8stesting.DeleteActionImpl).DeleteOptions)
				return false, nil, nil
			})
			if _, err := killWith(context.Background(), "k8s://https://127.0.0.1:6443", "ns:app-driver", append(tt.opts, withClient(cs))...); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("no delete")
			}
			if diff := cmp.Diff(tt.want, got.GracePeriodSeconds); diff != "" {
				t.Errorf("grace period (-want +got):\n%s", diff)
			}
		})
	}
}

// withClient sets the API client Status and Kill use (the test seam).
func withClient(c *fake.Clientset) Option {
	return func(o *options) error { o.client = c; return nil }
}
