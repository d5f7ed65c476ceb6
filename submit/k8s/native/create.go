package native

// This file holds what the native builder says of its objects: their
// owner, their kinds and their YAML. The objects are created by submit/k8s,
// the one package that imports client-go.

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// SetOwner makes pod the owner of every owned object, replacing other
// owners (KubernetesUtils.addOwnerReference).
func (o *Objects) SetOwner(pod *corev1.Pod) {
	isController := true
	for _, x := range o.Owned() {
		x.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &isController}})
	}
}

// KindOf names o's kind in lower case (pod, service, configmap, ...), as
// messages about it do.
func KindOf(o metav1.Object) string {
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
// then the owned objects): what a dry run shows of a native submission.
func (o *Objects) YAML() ([]byte, error) {
	var docs []string
	for _, x := range append([]metav1.Object{o.Pod}, o.Owned()...) {
		b, err := yaml.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("rendering %s %s: %w", KindOf(x), x.GetName(), err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}
