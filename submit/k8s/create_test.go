package k8s

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s/native"
)

// TestCreateOrderAndOwner: createObjects follows Client.run: the pod
// first, then the owned objects with the pod as their controller; a
// failure deletes the pod.
func TestCreateOrderAndOwner(t *testing.T) {
	env := mapEnv(map[string]string{"USER": "u"})
	objsOf := func(conf ...string) *native.Objects {
		args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
			"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9"}
		for _, c := range conf {
			args = append(args, "--conf", c)
		}
		b, err := New(WithDriverSparkVersion("3.5.9"))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := b.DryRun(context.Background(), &submit.Prepared{Sub: mustLoad(t, append(args, "--class", "Main", "local:///opt/app.jar"), env)})
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	objs := objsOf("spark.kubernetes.executor.podTemplateFile=native/testdata/equiv/files/executor-template.yaml",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.mount.path=/d",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.claimName=OnDemand",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.storageClass=sc",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.sizeLimit=1Gi")
	c := fake.NewClientset()
	var order []string
	c.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		order = append(order, a.GetResource().Resource)
		if a.GetResource().Resource == "pods" {
			p := a.(k8stesting.CreateAction).GetObject().(metav1.Object)
			p.SetUID("pod-uid")
		}
		return false, nil, nil
	})
	pod, err := createObjects(context.Background(), c, objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pods", "services", "persistentvolumeclaims", "configmaps", "configmaps"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	for _, o := range objs.Owned() {
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].Name != pod.Name || refs[0].UID != "pod-uid" ||
			refs[0].Controller == nil || !*refs[0].Controller || refs[0].BlockOwnerDeletion != nil {
			t.Errorf("%s owner %+v", o.GetName(), refs)
		}
	}

	// The ConfigMap fails: the pod is deleted, the error says which object.
	c = fake.NewClientset()
	c.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))
	})
	objs = objsOf()
	if _, err := createObjects(context.Background(), c, objs); !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want the Forbidden error", err)
	}
	if _, err := c.CoreV1().Pods(objs.Namespace).Get(context.Background(), objs.Pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pod was not deleted: %v", err)
	}
}
