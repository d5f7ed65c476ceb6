package native

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
)

// Create follows Client.run: the pod first, then the owned objects with
// the pod as their controller; a failure deletes the pod.
func TestCreateOrderAndOwner(t *testing.T) {
	in := testInput(ResourceJava, map[string]string{"spark.kubernetes.executor.podTemplateFile": "testdata/equiv/files/executor-template.yaml",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.mount.path":           "/d",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.claimName":    "OnDemand",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.storageClass": "sc",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.sizeLimit":    "1Gi"})
	objs := build(t, in)
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
	pod, err := Create(context.Background(), c, objs)
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
	objs = build(t, testInput(ResourceJava, nil))
	if _, err := Create(context.Background(), c, objs); !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want the Forbidden error", err)
	}
	if _, err := c.CoreV1().Pods("default").Get(context.Background(), objs.Pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pod was not deleted: %v", err)
	}
}
