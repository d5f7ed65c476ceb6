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
	r, err := applyArgs(ctx, argv, src("file:///store/jars/a.jar", nil))
	if err != nil || !strings.Contains(warningOf(r.Warnings, WarnFileURLs), "the jars are file: URLs") {
		t.Errorf("file: URLs: %v %q", err, r.Warnings)
	}
	r, err = applyArgs(ctx, argv, src("local:///opt/a.jar", nil), WithImage("oci:/tmp/layout@sha256:00"))
	if err != nil || !strings.Contains(warningOf(r.Warnings, WarnLayoutImage), "an OCI layout on this host") {
		t.Errorf("oci: image: %v %q", err, r.Warnings)
	}
	conf := map[string]string{"spark.hadoop.fs.s3a.endpoint": "http://s3.local", "spark.hadoop.fs.s3a.path.style.access": "true"}
	r, err = applyArgs(ctx, append([]string{"--conf", "spark.hadoop.fs.s3a.endpoint=http://mine"}, argv...), src("s3a://b/jars/a.jar", conf))
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
	r, err = applyArgs(ctx, standalone, src("local:///opt/a.jar", nil), WithImage("registry.example/spark:1"))
	if err != nil || !strings.HasPrefix(warningOf(r.Warnings, WarnImageNotK8s), "image registry.example/spark:1: master standalone is not Kubernetes") {
		t.Errorf("image for a standalone master: %v %q", err, r.Warnings)
	}
}

// TestAvoidDownloadSchemes: K8s cluster mode onto a store's s3a:// URLs sets
// spark.kubernetes.jars.avoidDownloadSchemes=s3a for the lines that read
// it (4.0+, or the line unknown), so that executors fetch the jars from the
// store; a user's own value wins, and nothing is set elsewhere.
func TestAvoidDownloadSchemes(t *testing.T) {
	k8s := []string{"--master", "k8s://https://h:6443", "--deploy-mode", "cluster", "--packages", "g:a:1", "local:///app.jar"}
	for _, tc := range []struct {
		name, version, url string
		argv               []string
		want               string // the conf's value in the rewritten argv, "" when absent
	}{
		{"4.0 store", "4.0.5", "s3a://b/jars/a.jar", k8s, "s3a"},
		{"4.3 store", "4.3.0", "s3a://b/jars/a.jar", k8s, "s3a"},
		{"line unknown", "", "s3a://b/jars/a.jar", k8s, "s3a"},
		{"3.5 from the image tag", "", "s3a://b/jars/a.jar", append([]string{"--conf", "spark.kubernetes.container.image=apache/spark:3.5.0"}, k8s...), ""},
		{"4.1 from the image tag", "", "s3a://b/jars/a.jar", append([]string{"--conf", "spark.kubernetes.container.image=apache/spark:4.1.4-scala2.13-java21-ubuntu"}, k8s...), "s3a"},
		{"told line wins over the tag", "4.0.5", "s3a://b/jars/a.jar", append([]string{"--conf", "spark.kubernetes.container.image=apache/spark:3.5.0"}, k8s...), "s3a"},
		{"3.5 does not read it", "3.5.9", "s3a://b/jars/a.jar", k8s, ""},
		{"3.4 does not read it", "3.4.4", "s3a://b/jars/a.jar", k8s, ""},
		{"https store URLs", "4.0.5", "https://b.s3.example/jars/a.jar", k8s, ""},
		{"image jars", "4.0.5", "local:///opt/spark/prebake/jars/a.jar", k8s, ""},
		{"user's value wins", "4.0.5", "s3a://b/jars/a.jar", append([]string{"--conf", AvoidDownloadSchemes + "=https,s3a"}, k8s...), "https,s3a"},
		{"client mode", "4.0.5", "s3a://b/jars/a.jar", []string{"--master", "k8s://https://h:6443", "--packages", "g:a:1", "app.jar"}, ""},
		{"standalone cluster", "4.0.5", "s3a://b/jars/a.jar", []string{"--master", "spark://h:7077", "--deploy-mode", "cluster", "--packages", "g:a:1", "s3a://b/app.jar"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := WithJarSource(JarSourceFunc(func(context.Context, submit.Packages) (*Jars, error) {
				return &Jars{Local: []string{"/c/a.jar"}, Cluster: []string{tc.url}, From: "store s3://b/jars"}, nil
			}))
			r, err := applyArgs(context.Background(), tc.argv, src, WithSparkVersion(tc.version))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for i, a := range r.Args {
				if v, ok := strings.CutPrefix(a, AvoidDownloadSchemes+"="); ok && i > 0 && r.Args[i-1] == "--conf" {
					got = v
				}
			}
			if got != tc.want {
				t.Errorf("%s = %q, want %q (argv %q)", AvoidDownloadSchemes, got, tc.want, r.Args)
			}
		})
	}
}
