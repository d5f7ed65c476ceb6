# The kubeflow spark-operator v2.3.0 controller (issue 30), for the test of a
# SparkApplication rewritten by prebake and submitted by the real operator:
# built from the Go module proxy through its own nested module
# .ci/spark-operator (it carries the operator's replace directives, which
# go install refuses; its own go.sum, so the operator's modules never change
# the hash, and so the cache, of the Kubernetes builds), and its CRDs copied
# from the same module (config/crd/bases), into
# $PREBAKE_CI_CACHE/spark-operator-v2.3.0-<go.sum hash>/ (symlink
# spark-operator-current). The test runs the controller as a local process
# whose spark-submit is pyspark's ($SPARK_HOME), as the operator's image
# would carry Spark.
so_version=v2.3.0
so_mod="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.ci/spark-operator" && pwd)"
so_dir="$PREBAKE_CI_CACHE/spark-operator-$so_version-$(sha256sum "$so_mod/go.sum" | cut -c1-12)"
if [ -x "$so_dir/spark-operator" ] && [ -s "$so_dir/crds/sparkoperator.k8s.io_sparkapplications.yaml" ]; then
  log "spark-operator: $so_dir is up to date"
else
  log "spark-operator: building the kubeflow spark-operator $so_version controller"
  mkdir -p "$so_dir/crds"
  (cd "$so_mod" && nice go build -trimpath -ldflags "-s -w" -o "$so_dir/spark-operator.tmp" github.com/kubeflow/spark-operator/v2/cmd/operator)
  src="$(cd "$so_mod" && go list -m -f '{{.Dir}}' github.com/kubeflow/spark-operator/v2)"
  cp "$src"/config/crd/bases/*.yaml "$so_dir/crds/"
  chmod u+w "$so_dir"/crds/*.yaml
  mv "$so_dir/spark-operator.tmp" "$so_dir/spark-operator"
fi
ln -sfn "$so_dir" "$PREBAKE_CI_CACHE/spark-operator-current"
unset so_version so_mod so_dir src
