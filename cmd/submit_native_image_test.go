package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/layers/registrytest"
)

// pushAnnotated writes a small image to host/repo with the manifest
// annotations anns and returns its digest reference.
func pushAnnotated(t *testing.T, host, repo string, anns map[string]string) string {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.Annotations(img, anns).(v1.Image)
	ref, err := name.ParseReference(host + "/" + repo + ":1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return host + "/" + repo + "@" + d.String()
}

// The native submitter reads the Spark version prebake recorded on the
// driver image (dev.prebake.spark-version) when no flag gives it; an image
// without one is still a usage error, which says the image was asked.
func TestSubmitNativeVersionFromImage(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := registrytest.InProcess(t)
	baked := pushAnnotated(t, host, "team/spark-jobs", map[string]string{layers.AnnotationSparkVersion: "3.5.9"})
	plain := pushAnnotated(t, host, "team/plain", map[string]string{"x": "y"})
	argv := func(img string) []string {
		return []string{"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster",
			"--conf", "spark.kubernetes.container.image=" + img, "--class", "M", "local:///a.jar"}
	}
	tests := []struct {
		name           string
		img            string
		code           int
		stdout, stderr string
	}{
		{"annotated image", baked, 0, "spark-version: 3.5.9", ""},
		{"no annotation", plain, exitcode.Usage, "", "the image " + plain + " was asked: it records no Spark version"},
		{"missing image", host + "/team/none:1", exitcode.Usage, "", "the image " + host + "/team/none:1 was asked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"submit", "--dry-run", "-o", "yaml", "--submitter", "native"}, argv(tt.img)...)
			code := ExecuteContext(context.Background(), args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout %q (want %q), stderr %q (want %q)", stdout.String(), tt.stdout, stderr.String(), tt.stderr)
			}
			if tt.code != 0 && !strings.Contains(stderr.String(), "--spark-version") {
				t.Errorf("stderr %q: want the --spark-version hint", stderr.String())
			}
		})
	}
}

// A submission the native submitter refuses creates nothing: its JSON
// result names no pod and no submission ID, and its phase is NotSubmitted.
func TestSubmitNativeRefusedJSON(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	host := registrytest.InProcess(t)
	plain := pushAnnotated(t, host, "team/plain", map[string]string{"x": "y"})
	var stdout, stderr bytes.Buffer
	code := ExecuteContext(context.Background(), []string{"submit", "-o", "json", "--submitter", "native", "--",
		"--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.container.image=" + plain, "--class", "M", "local:///a.jar"}, &stdout, &stderr)
	if code != exitcode.Usage {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitcode.Usage, stdout.String(), stderr.String())
	}
	var res map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res["phase"] != "NotSubmitted" || res["submissionId"] != nil || res["pod"] != nil {
		t.Errorf("result %s: want phase NotSubmitted, no submissionId, no pod", stdout.String())
	}
	if !strings.Contains(stderr.String(), "was asked") {
		t.Errorf("stderr %q: want the image lookup's failure", stderr.String())
	}
}
