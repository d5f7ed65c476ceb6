"""The DAG of TestK8sIT's Airflow case: Airflow's own SparkSubmitOperator,
unchanged, in K8s cluster mode, with prebake installed as the spark-submit on
PATH. The connection spark_k8s names the master and deploy mode; the test
passes the job's conf (namespace, credentials, image) as JSON."""

import json
import os
from datetime import datetime

from airflow import DAG
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

with DAG(dag_id="spark_k8s_prebake", start_date=datetime(2026, 1, 1), schedule=None, catchup=False) as dag:
    SparkSubmitOperator(
        task_id="spark_submit_k8s",
        conn_id="spark_k8s",
        application="local:///opt/app.jar",
        java_class="org.example.Main",
        name=os.environ["PREBAKE_IT_APP_NAME"],
        packages=os.environ["PREBAKE_IT_PACKAGES"],
        conf=json.loads(os.environ["PREBAKE_IT_CONF"]),
        verbose=False,
    )
