package rewrite

import (
	"context"
	"strings"
	"testing"

	"github.com/prebake/prebake/submit"
)

// warningOf returns the text of the warning of kind in ws, or "".
func warningOf(ws []Warning, kind WarningKind) string {
	for _, w := range ws {
		if w.Kind == kind {
			return w.Text
		}
	}
	return ""
}

// TestClusterReachWarnings: a cluster-mode rewrite onto file: URLs or an
// OCI layout warns with the fix (command lines and manifests), as a typed
// warning (the CLI adds its flags) whose text names none; the store's S3A
// conf is added unless the user set it.
func TestClusterReachWarnings(t *testing.T) {
	ctx := context.Background()
	src := func(cluster string, conf map[string]string) Option {
		return WithJarSource(JarSourceFunc(func(context.Context, submit.Packages) (*Jars, error) {
			return &Jars{Local: []string{"/c/a.jar"}, Cluster: []string{cluster}, From: "store x", Conf: conf}, nil
		}))
	}
	argv := []string{"--master", "k8s://https://h:6443", "--deploy-mode", "cluster", "--packages", "g:a:1", "local:///app.jar"}
	r, err := Apply(ctx, argv, src("file:///store/jars/a.jar", nil))
	if err != nil || !strings.Contains(warningOf(r.Warnings, WarnFileURLs), "the jars are file: URLs") {
		t.Errorf("file: URLs: %v %q", err, r.Warnings)
	}
	r, err = Apply(ctx, argv, src("local:///opt/a.jar", nil), WithImage("oci:/tmp/layout@sha256:00"))
	if err != nil || !strings.Contains(warningOf(r.Warnings, WarnLayoutImage), "an OCI layout on this host") {
		t.Errorf("oci: image: %v %q", err, r.Warnings)
	}
	conf := map[string]string{"spark.hadoop.fs.s3a.endpoint": "http://s3.local", "spark.hadoop.fs.s3a.path.style.access": "true"}
	r, err = Apply(ctx, append([]string{"--conf", "spark.hadoop.fs.s3a.endpoint=http://mine"}, argv...), src("s3a://b/jars/a.jar", conf))
	got := strings.Join(r.Args, " ")
	if err != nil || !strings.Contains(got, "spark.hadoop.fs.s3a.path.style.access=true") || strings.Contains(got, "http://s3.local") || !strings.Contains(got, "endpoint=http://mine") {
		t.Errorf("s3a conf: %v %s", err, got)
	}
	m, err := Manifest(ctx, "m.yaml", []byte(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: x}
spec:
  type: Scala
  mode: cluster
  mainApplicationFile: local:///app.jar
  deps: {packages: ["g:a:1"]}
`), src("file:///store/jars/a.jar", nil), WithImage("oci:/tmp/layout:1"))
	if err != nil || !strings.Contains(warningOf(m.Warnings, WarnFileURLs), "file: URLs") || !strings.Contains(warningOf(m.Warnings, WarnLayoutImage), "OCI layout") {
		t.Errorf("manifest: %v %q", err, m.Warnings)
	}
	standalone := []string{"--master", "spark://h:7077", "--packages", "g:a:1", "app.jar"}
	r, err = Apply(ctx, standalone, src("local:///opt/a.jar", nil), WithImage("registry.example/spark:1"))
	if err != nil || !strings.HasPrefix(warningOf(r.Warnings, WarnImageNotK8s), "image registry.example/spark:1: master standalone is not Kubernetes") {
		t.Errorf("image for a standalone master: %v %q", err, r.Warnings)
	}
}
