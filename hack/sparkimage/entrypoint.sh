#!/bin/bash
# Entry point of prebake's test Spark image (hack/sparkimage). Spark on
# Kubernetes starts its pods with the argument "driver" or "executor" and
# passes everything else in the environment; this script turns that into
# the JVM command line, as Spark's own image does, under tini (PID 1 reaps
# and forwards signals). Any other argument list runs as it is.
set -euo pipefail
export SPARK_HOME="${SPARK_HOME:-/opt/spark}"

# A uid without a passwd entry (an arbitrary runAsUser) gets one when the
# file is writable: the JVM and Hadoop look the user up.
if ! getent passwd "$(id -u)" >/dev/null && [ -w /etc/passwd ]; then
  echo "$(id -u):x:$(id -u):$(id -g):${SPARK_USER_NAME:-anonymous uid}:$SPARK_HOME:/bin/false" >>/etc/passwd
fi

# The configuration directory first, then the jars of the image, then
# whatever the submission added.
classpath="${SPARK_CONF_DIR:-$SPARK_HOME/conf}"
if [ -n "${HADOOP_CONF_DIR:-}" ]; then classpath="$classpath:$HADOOP_CONF_DIR"; fi
classpath="$classpath:${SPARK_CLASSPATH:-}:$SPARK_HOME/jars/*"
if [ -n "${SPARK_EXTRA_CLASSPATH:-}" ]; then classpath="$classpath:$SPARK_EXTRA_CLASSPATH"; fi
if [ -n "${HADOOP_HOME:-}" ] && [ -z "${SPARK_DIST_CLASSPATH:-}" ]; then
  SPARK_DIST_CLASSPATH="$("$HADOOP_HOME/bin/hadoop" classpath)"
fi

# The executor's JVM options arrive one per variable, SPARK_JAVA_OPT_0, _1, …
java_opts=()
i=0
while var="SPARK_JAVA_OPT_$i" && [ -n "${!var+set}" ]; do
  java_opts+=("${!var}")
  i=$((i + 1))
done

case "${1:-}" in
driver)
  shift
  # The driver is a client-mode spark-submit inside its own pod.
  cmd=("$SPARK_HOME/bin/spark-submit" --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:?}" --deploy-mode client "$@")
  ;;
executor)
  shift
  cmd=("${JAVA_HOME:-/usr}/bin/java" "${java_opts[@]}"
    "-Xms${SPARK_EXECUTOR_MEMORY:?}" "-Xmx$SPARK_EXECUTOR_MEMORY"
    -cp "$classpath:${SPARK_DIST_CLASSPATH:-}"
    org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend
    --driver-url "${SPARK_DRIVER_URL:?}" --executor-id "${SPARK_EXECUTOR_ID:?}"
    --cores "${SPARK_EXECUTOR_CORES:?}" --app-id "${SPARK_APPLICATION_ID:?}"
    --hostname "${SPARK_EXECUTOR_POD_IP:?}" --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}"
    --podName "${SPARK_EXECUTOR_POD_NAME:-$(hostname)}")
  ;;
*)
  cmd=("$@")
  ;;
esac
exec /usr/bin/tini -s -- "${cmd[@]}"
