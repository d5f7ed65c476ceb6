//go:build tools

// Package ci pins the Kubernetes test servers (kube-apiserver, etcd) that
// hack/infra.d/50-k8s.sh builds. It is a nested module so that the root
// module's go test ./... never enters it.
package ci

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
