//go:build tools

// Package ci pins the Kubernetes test servers that hack/infra.d/50-k8s.sh
// builds in one go build: kube-apiserver, kube-controller-manager (the real
// Job controller), and the real node's kubelet, kube-scheduler and
// kube-proxy; etcd is ./cmd/etcd. It is a nested module so that the root
// module's go test ./... never enters it.
package ci

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
