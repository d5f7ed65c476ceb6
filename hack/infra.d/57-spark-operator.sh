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
# The build holds an exclusive flock on $PREBAKE_CI_CACHE/spark-operator.lock
# until it has installed: .ci/run lets it run on while the tests start (on a
# fresh machine), another hack/infra.sh meanwhile (make test's) leaves it to
# that build, and the two tests that need it wait for the lock
# (internal/testenv WaitForBuild, from SparkOperatorDir).
so_ready() { [ -x "$so_dir/spark-operator" ] && [ -s "$so_dir/crds/sparkoperator.k8s.io_sparkapplications.yaml" ]; }
if so_ready; then
  log "spark-operator: $so_dir is up to date"
  ln -sfn "$so_dir" "$PREBAKE_CI_CACHE/spark-operator-current"
else
  exec {so_fd}>"$PREBAKE_CI_CACHE/spark-operator.lock"
  if ! flock -n "$so_fd"; then
    log "spark-operator: another run is building it (it holds $PREBAKE_CI_CACHE/spark-operator.lock); its tests wait for that build"
  else
    if ! so_ready; then
      log "spark-operator: building the kubeflow spark-operator $so_version controller"
      mkdir -p "$so_dir/crds"
      (cd "$so_mod" && nice go build -trimpath -ldflags "-s -w" -o "$so_dir/spark-operator.tmp" github.com/kubeflow/spark-operator/v2/cmd/operator)
      src="$(cd "$so_mod" && go list -m -f '{{.Dir}}' github.com/kubeflow/spark-operator/v2)"
      cp "$src"/config/crd/bases/*.yaml "$so_dir/crds/"
      chmod u+w "$so_dir"/crds/*.yaml
      mv "$so_dir/spark-operator.tmp" "$so_dir/spark-operator"
    fi
    ln -sfn "$so_dir" "$PREBAKE_CI_CACHE/spark-operator-current"
  fi
  exec {so_fd}>&-
fi
unset so_version so_mod so_dir src so_fd
unset -f so_ready
