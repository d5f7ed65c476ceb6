"""The DAG of TestK8sPyDepsAirflow (issue 44): Airflow's own
SparkSubmitOperator, unchanged, runs a PySpark app in K8s cluster mode with
prebake installed as the spark-submit on PATH. The connection spark_k8s
names the master and deploy mode; the test passes the job (application,
arguments, packages) and its conf in the environment, the conf and the
arguments as JSON. The job's Python requirements reach prebake through
prebake.yaml (pyRequirements), not through the operator."""

import json
import os
from datetime import datetime

from airflow import DAG
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

with DAG(dag_id="spark_k8s_pydeps", start_date=datetime(2026, 1, 1), schedule=None, catchup=False) as dag:
    SparkSubmitOperator(
        task_id="spark_submit_pydeps",
        conn_id="spark_k8s",
        application=os.environ["PREBAKE_IT_APPLICATION"],
        application_args=json.loads(os.environ.get("PREBAKE_IT_ARGS", "[]")),
        name=os.environ["PREBAKE_IT_APP_NAME"],
        packages=os.environ["PREBAKE_IT_PACKAGES"],
        conf=json.loads(os.environ["PREBAKE_IT_CONF"]),
        verbose=False,
    )
