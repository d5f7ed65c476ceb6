//go:build tools

// Package ci pins the kubeflow spark-operator v2.3.0 controller, built by
// hack/infra.d/57-spark-operator.sh as
// `go build github.com/kubeflow/spark-operator/v2/cmd/operator` from this
// nested module: its own go.mod (with the operator's replace directives,
// which a plain go install refuses) and go.sum, so the operator's modules
// never change the hash, and so the cache, of the Kubernetes builds in
// ../k8s. The CRDs come from the same module zip (config/crd/bases).
package ci

import _ "github.com/kubeflow/spark-operator/v2/cmd/operator/controller"
