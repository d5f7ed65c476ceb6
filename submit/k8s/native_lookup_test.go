package k8s

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// The image is asked for its Spark version only when neither the flag, the
// baked image of the run nor an official tag gives it; its failure is said.
func TestNativeVersionLookup(t *testing.T) {
	env := []string{"SPARK_USER=u"}
	load := func(img string) []string {
		return []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
			"--conf", "spark.kubernetes.container.image=" + img, "--class", "M", "local:///a.jar"}
	}
	tests := []struct {
		name    string
		img     string
		opts    []Option
		version string
		err     error
		asked   bool
		want    string // in the YAML, or in the error
	}{
		{"from the image", "reg.example/team/jobs@sha256:1", nil, "3.5.9", nil, true, "spark-version: 3.5.9"},
		{"flag wins, image not asked", "reg.example/team/jobs:1", []Option{WithDriverSparkVersion("4.0.5")}, "3.5.9", nil, false, "spark-version: 4.0.5"},
		{"official tag, image not asked", "apache/spark:3.5.9", nil, "4.0.5", nil, false, "spark-version: 3.5.9"},
		{"lookup fails", "reg.example/team/jobs:1", nil, "", errors.New("unauthorized"), true, "the image reg.example/team/jobs:1 was asked: unauthorized"},
		{"not recorded", "reg.example/team/jobs:1", nil, "", nil, true, "records no Spark version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			lookup := func(ctx context.Context, image string) (string, error) {
				asked = true
				if _, ok := ctx.Deadline(); !ok || image != tt.img {
					t.Errorf("lookup of %q without a deadline, or not the driver image", image)
				}
				return tt.version, tt.err
			}
			var out bytes.Buffer
			err := dryRunWith(mustLoad(t, load(tt.img), env), &out, append(tt.opts, WithImageSparkVersionLookup(lookup))...)
			got := out.String()
			if err != nil {
				got = err.Error()
			}
			if asked != tt.asked || !strings.Contains(got, tt.want) {
				t.Errorf("asked %v (want %v), got %q, want %q", asked, tt.asked, got, tt.want)
			}
		})
	}
}

// A submission the native submitter refuses names no pod and no submission
// ID: nothing was created.
func TestNativeRefusedResult(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	sub := mustLoad(t, []string{"--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.container.image=reg.example/jobs:1", "--class", "M", "local:///a.jar"}, []string{"SPARK_USER=u"})
	res, err := submitWith(context.Background(), sub, WithSubmitter(SubmitterNative))
	if err == nil {
		t.Fatal("no error")
	}
	if res.Phase != PhaseNotSubmitted || res.Pod != "" || res.SubmissionID != "" {
		t.Errorf("result %+v: want phase %s, no pod, no submission ID", res, PhaseNotSubmitted)
	}
}
