# A real Apache Airflow with its Spark provider, for examples/airflow (the
# DAG is run with `airflow dags test`) and the SparkSubmitOperator test.
# Pinned, in its own virtualenv cached by version under
# $PREBAKE_CI_CACHE/airflow-<version>-spark-<provider>/ (outside the clone);
# a second run costs nothing. pip reaches PyPI through the machine's own
# configuration. internal/testenv.Airflow reads the same versions (keep them
# in step).
airflow_version="${PREBAKE_AIRFLOW_VERSION:-3.3.2}"
airflow_spark_provider="${PREBAKE_AIRFLOW_SPARK_PROVIDER:-6.3.4}"
airflow_dir="$PREBAKE_CI_CACHE/airflow-$airflow_version-spark-$airflow_spark_provider"
# A virtualenv is not relocatable, so it is built under its final name and
# the .installed marker, written last, says it is complete.
if [ ! -e "$airflow_dir/.installed" ]; then
  log "pip install apache-airflow==$airflow_version apache-airflow-providers-apache-spark==$airflow_spark_provider into $airflow_dir"
  rm -rf "$airflow_dir"
  python3 -m venv "$airflow_dir"
  "$airflow_dir/bin/python" -m pip install --quiet --no-compile \
    "apache-airflow==$airflow_version" "apache-airflow-providers-apache-spark==$airflow_spark_provider"
  touch "$airflow_dir/.installed"
fi
