package k8s

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOperatorExitCode reads the driver's exit code from the errorMessage
// spark-operator v2.3.0 writes (internal/controller/sparkapplication:
// "driver container failed with ExitCode: %d, Reason: %s").
func TestOperatorExitCode(t *testing.T) {
	type got struct {
		Code int
		OK   bool
	}
	for _, tc := range []struct {
		msg  string
		want got
	}{
		{"driver container failed with ExitCode: 3, Reason: Error", got{3, true}},
		{"driver container failed with ExitCode: 137, Reason: OOMKilled", got{137, true}},
		{"driver container failed with ExitCode: -1, Reason: Unknown", got{-1, true}},
		{"driver pod not found", got{}},
		{"driver container status missing", got{}},
		{"failed to run spark-submit: exit status 1", got{}},
		{"driver container failed with ExitCode: 99999999999999999999, Reason: x", got{}},
		{"", got{}},
	} {
		code, ok := operatorExitCode(tc.msg)
		if diff := cmp.Diff(tc.want, got{code, ok}); diff != "" {
			t.Errorf("operatorExitCode(%q) (-want +got):\n%s", tc.msg, diff)
		}
	}
}

// TestOperatorSparkVersion: the driver's version, else the baked image's,
// else WithOperatorSparkVersion's default.
func TestOperatorSparkVersion(t *testing.T) {
	for _, tc := range []struct {
		opts  []Option
		image string // the baked image's, from submit.Prepared
		want  string
	}{
		{nil, "", "3.5.3"},
		{[]Option{WithOperatorSparkVersion("4.0.1")}, "", "4.0.1"},
		{[]Option{WithOperatorSparkVersion("4.0.1")}, "4.0.5", "4.0.5"},
		{[]Option{WithDriverSparkVersion("3.5.9")}, "4.0.5", "3.5.9"},
	} {
		o, err := makeOptions(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		o.imageSparkVersion = tc.image
		if diff := cmp.Diff(tc.want, operatorSparkVersion(o)); diff != "" {
			t.Errorf("operatorSparkVersion (-want +got):\n%s", diff)
		}
	}
}
