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
"""

from datetime import datetime, timedelta

from airflow import DAG
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

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
            "--lock", "/opt/jobs/daily-events/prebake.lock",
            "--frozen",  # a stale lock fails fast (exit 78) instead of resolving in the pod
            "--timeout", "3h",
            "-o", "json",
            "--",
            *SPARK_ARGS,
        ],
        env_vars={"AWS_REGION": "eu-west-1"},
        do_xcom_push=False,
        get_logs=True,
        on_finish_action="delete_pod",
    )
