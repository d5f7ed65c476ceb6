package spark

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestK8sJourneyShippedRBAC (issue 42, HIGH 1): the RBAC the Airflow guide
// ships (examples/airflow/rbac.yaml, applied as it is, not a copy) lets the
// submitter's service account submit with both submitters, spark-submit's
// server-side apply of the driver's Service and ConfigMap included, and the
// driver's service account run its executors: each submission exits 0 with
// a token of spark-submitter and no other grant in the namespace.
func TestK8sJourneyShippedRBAC(t *testing.T) {
	t.Parallel()
	j := newJourney(t, "journey-rbac")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cli := j.c.Client
	// The namespace's driver account comes with edit (SparkNamespace): take
	// it away, so the shipped spark-driver Role is all the driver has.
	if err := cli.RbacV1().RoleBindings(j.ns).Delete(ctx, "spark-edit", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	applyManifest(ctx, t, cli, j.ns, "../../examples/airflow/rbac.yaml")
	for i, submitter := range []string{"spark-submit", "native"} {
		tok, err := j.c.BoundToken(ctx, j.ns, "spark-submitter", "rbac-token-"+submitter)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(j.tokenFile, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
		name := []string{"rbac-spark-submit", "rbac-native"}[i]
		r := prebakeWithin(t, j.env, 6*time.Minute, j.args(
			[]string{"--image-target", j.c.Registry + "/spark-jobs", "--submitter", submitter},
			[]string{"spark.executor.instances=1", "spark.app.name=" + name, "spark.kubernetes.driver.pod.name=" + name + "-driver"},
			"sleep", "1", "0")...)
		res := parseResult(t, r)
		if r.code != 0 || res.Source != "driver" {
			t.Errorf("%s with the shipped RBAC: exit %d, source %q, want 0 from the driver\nstdout:\n%s\nstderr:\n%s", submitter, r.code, res.Source, r.stdout, r.stderr)
		}
		if bytes.Contains([]byte(r.stdout+r.stderr), []byte(tok)) {
			t.Errorf("the token is in prebake's output")
		}
	}
}

// applyManifest creates every object of a multi-document YAML file in ns,
// as `kubectl apply -n ns -f file` would for new objects (ServiceAccounts,
// Roles and RoleBindings; an existing ServiceAccount is kept).
func applyManifest(ctx context.Context, t *testing.T, cli kubernetes.Interface, ns, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			_, err = cli.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		case *rbacv1.Role:
			_, err = cli.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cli.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("%s: unexpected kind %T", file, obj)
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
}
