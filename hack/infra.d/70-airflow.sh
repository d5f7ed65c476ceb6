# A real Apache Airflow with its Spark provider, for examples/airflow (the
# DAG is run with `airflow dags test`) and the SparkSubmitOperator tests
# (the cncf.kubernetes provider is what the Spark hook needs for k8s:// masters).
# Pinned, in its own virtualenv cached by version under
# $PREBAKE_CI_CACHE/airflow-<version>-spark-<provider>-k8s-<provider>/ (outside the clone);
# a second run costs nothing. pip reaches PyPI through the machine's own
# configuration. internal/testenv.Airflow reads the same versions (keep them
# in step).
airflow_version="${PREBAKE_AIRFLOW_VERSION:-3.3.2}"
airflow_spark_provider="${PREBAKE_AIRFLOW_SPARK_PROVIDER:-6.3.4}"
airflow_k8s_provider="${PREBAKE_AIRFLOW_K8S_PROVIDER:-10.25.0}"
airflow_dir="$PREBAKE_CI_CACHE/airflow-$airflow_version-spark-$airflow_spark_provider-k8s-$airflow_k8s_provider"
# A virtualenv is not relocatable, so it is built under its final name and
# the .installed marker, written last, says it is complete.
if [ ! -e "$airflow_dir/.installed" ]; then
  log "pip install apache-airflow==$airflow_version apache-airflow-providers-apache-spark==$airflow_spark_provider apache-airflow-providers-cncf-kubernetes==$airflow_k8s_provider into $airflow_dir"
  rm -rf "$airflow_dir"
  python3 -m venv "$airflow_dir"
  "$airflow_dir/bin/python" -m pip install --quiet --no-compile \
    "apache-airflow==$airflow_version" "apache-airflow-providers-apache-spark==$airflow_spark_provider" \
    "apache-airflow-providers-cncf-kubernetes==$airflow_k8s_provider"
  touch "$airflow_dir/.installed"
fi
