package native

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// Create makes objs in Spark's order: the driver pod first, then the
// Service, the NetworkPolicy (4.2+), PVCs, executor pod template ConfigMap and driver ConfigMap, each
// owned by the pod ({v1, Pod, name, uid, controller: true}). When one of
// those fails the pod is deleted, as spark-submit does, and the error
// returned. The returned pod is the one the API server created.
func Create(ctx context.Context, c kubernetes.Interface, objs *Objects) (*corev1.Pod, error) {
	ns := objs.Namespace
	pod, err := c.CoreV1().Pods(ns).Create(ctx, objs.Pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating driver pod %s/%s: %w", ns, objs.Pod.Name, err)
	}
	objs.SetOwner(pod)
	var errs []error
	for _, o := range objs.Owned() {
		var err error
		switch x := o.(type) {
		case *corev1.Service:
			_, err = c.CoreV1().Services(ns).Create(ctx, x, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, x, metav1.CreateOptions{})
		case *corev1.PersistentVolumeClaim:
			_, err = c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, x, metav1.CreateOptions{})
		case *networkingv1.NetworkPolicy:
			_, err = c.NetworkingV1().NetworkPolicies(ns).Create(ctx, x, metav1.CreateOptions{})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("creating %s %s/%s: %w", kindOf(o), ns, o.GetName(), err))
			break
		}
	}
	if len(errs) > 0 {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := c.CoreV1().Pods(ns).Delete(dctx, pod.Name, metav1.DeleteOptions{}); derr != nil {
			errs = append(errs, fmt.Errorf("deleting driver pod %s/%s after the failure: %w", ns, pod.Name, derr))
		}
		return nil, errors.Join(errs...)
	}
	return pod, nil
}

// SetOwner makes pod the owner of every owned object, replacing other
// owners (KubernetesUtils.addOwnerReference).
func (o *Objects) SetOwner(pod *corev1.Pod) {
	isController := true
	for _, x := range o.Owned() {
		x.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &isController}})
	}
}

func kindOf(o metav1.Object) string {
	switch o.(type) {
	case *corev1.Pod:
		return "pod"
	case *corev1.Service:
		return "service"
	case *corev1.ConfigMap:
		return "configmap"
	case *corev1.PersistentVolumeClaim:
		return "persistentvolumeclaim"
	case *networkingv1.NetworkPolicy:
		return "networkpolicy"
	}
	return "object"
}

// YAML renders the objects as one YAML stream in creation order (the pod,
// then the owned objects), as --dry-run -o yaml prints them.
func (o *Objects) YAML() ([]byte, error) {
	var docs []string
	for _, x := range append([]metav1.Object{o.Pod}, o.Owned()...) {
		b, err := yaml.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("rendering %s %s: %w", kindOf(x), x.GetName(), err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}
