"""Airflow DAG: run a Spark job on Kubernetes through `prebake submit`.

The task runs in the Spark image with prebake added (`prebake bake image --add-self`,
or COPY the static binary into your Spark image). prebake resolves the job's
--packages ahead of time from the committed lock (no POM is read, no version chosen),
fetches the locked jars into its cache from the repositories the lock records (the
submitting pod needs that egress once per cache; the driver and executors never do),
uploads the ones the S3 store lacks, rewrites the submission to use the store's jars,
runs spark-submit with waitAppCompletion=false and polls the driver pod until it ends.
The task's exit code is the driver's own exit code, so Airflow marks a failed
driver as failed, and killing the task (SIGTERM) deletes the driver pod.

With `-o json` the final result (phase, exit code, reason, pod name, timings) is
printed as JSON on stdout, so it shows in the task log; the progress lines go to stderr.
`--result-file /airflow/xcom/return.json` writes the same JSON (or, on a failure before
the submission, {exitCode, error, warnings}) where the operator's XCom sidecar reads it.

What the pod needs, all below:
- the lock: a ConfigMap made from the committed lock, mounted read-only
  (kubectl create configmap daily-events-lock --from-file=prebake.lock=jobs/daily-events/prebake.lock);
- a writable cache: PREBAKE_CACHE on an emptyDir (Spark images run as a non-root user
  whose HOME may not be writable);
- RBAC for the submitting service account: examples/airflow/rbac.yaml (spark-submit creates
  the driver pod, a ConfigMap and a headless Service; prebake reads the pod and its log);
- prebake in the image: `prebake bake image --add-self` copies a linux build into it.

A sensor for a job submitted elsewhere runs `prebake submit --status-poll-only
NAMESPACE:DRIVER-POD -- --master k8s://…` (plus the credentials conf): it never submits.
"""

from datetime import datetime, timedelta

from airflow import DAG
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client import models as k8s

SPARK_IMAGE = "registry.example.com/spark/spark-prebake:3.5.3"  # Spark + /usr/local/bin/prebake
NAMESPACE = "spark-jobs"

SPARK_ARGS = [
    "--master", "k8s://https://kubernetes.default.svc",
    "--deploy-mode", "cluster",
    "--name", "daily-events",
    "--class", "com.example.events.Daily",
    # Unchanged from the old spark-submit command: prebake resolves these once.
    "--packages", "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.3,org.apache.hadoop:hadoop-aws:3.3.4",
    "--conf", "spark.kubernetes.namespace=" + NAMESPACE,
    "--conf", "spark.kubernetes.container.image=" + SPARK_IMAGE,
    "--conf", "spark.kubernetes.authenticate.driver.serviceAccountName=spark",
    "--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="
              "/var/run/secrets/kubernetes.io/serviceaccount/token",
    "--conf", "spark.kubernetes.authenticate.submission.caCertFile="
              "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
    "s3a://example-artifacts/jobs/events-assembly-1.4.2.jar",
    "--date", "{{ ds }}",  # application arguments stay untouched
]

LOCK_DIR = "/etc/prebake/daily-events"
CACHE_DIR = "/var/cache/prebake"

with DAG(
    dag_id="spark_daily_events_prebake",
    start_date=datetime(2026, 1, 1),
    schedule="@daily",
    catchup=False,
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5)},
) as dag:
    KubernetesPodOperator(
        task_id="submit_daily_events",
        namespace=NAMESPACE,
        service_account_name="spark-submitter",
        image=SPARK_IMAGE,
        cmds=["prebake"],
        arguments=[
            "submit",
            "--store", "s3://example-prebake/jars",
            "--lock", LOCK_DIR + "/prebake.lock",  # the ConfigMap below
            "--frozen",  # a stale lock fails fast (exit 78) instead of resolving in the pod
            "--timeout", "3h",
            "-o", "json",
            "--result-file", "/airflow/xcom/return.json",  # the result as this task's XCom
            "--",
            *SPARK_ARGS,
        ],
        env_vars={"AWS_REGION": "eu-west-1", "PREBAKE_CACHE": CACHE_DIR},
        volumes=[
            k8s.V1Volume(name="lock", config_map=k8s.V1ConfigMapVolumeSource(name="daily-events-lock")),
            k8s.V1Volume(name="cache", empty_dir=k8s.V1EmptyDirVolumeSource()),
        ],
        volume_mounts=[
            k8s.V1VolumeMount(name="lock", mount_path=LOCK_DIR, read_only=True),
            k8s.V1VolumeMount(name="cache", mount_path=CACHE_DIR),
        ],
        do_xcom_push=True,
        get_logs=True,
        on_finish_action="delete_pod",
    )
