"""Airflow DAG: a Spark job whose --packages prebake resolves ahead of time, on a worker
that has Spark (local, client or YARN mode: the driver runs under spark-submit here).

Two tasks, the two ways to use prebake from Airflow:

1. ``prebake_submit``: a BashOperator that puts ``prebake submit --`` in front of the
   spark-submit arguments. prebake resolves the packages (or takes them from ``--lock``),
   caches the jars, rewrites the arguments (no packages key left, the jars as local paths)
   and runs the real spark-submit; the task's exit code is spark-submit's (an app that
   exits 3 makes prebake exit 3). With ``-o json`` the result is one JSON object on one line
   of stdout, so the task's XCom (stdout's last line) is the whole result. A driver's exit
   code passes through unless it is one of prebake's own (README, "Exit codes"), so
   BashOperator skips the task on exit code 99 (``skip_on_exit_code``).

2. ``spark_submit_operator``: Airflow's own SparkSubmitOperator, unchanged. It runs the
   ``spark-submit`` it finds on PATH, so prebake is installed as that ``spark-submit``
   (prebake acts as spark-submit when it is called by that name) ahead of Spark's, and
   SPARK_HOME names the real Spark, which prebake runs after the rewrite::

       mkdir -p /opt/prebake/bin
       ln -s "$(command -v prebake)" /opt/prebake/bin/spark-submit
       export PATH=/opt/prebake/bin:$PATH SPARK_HOME=/opt/spark   # the Airflow worker's env

   The operator passes only spark-submit arguments, so prebake's own settings come from
   prebake.yaml ($PREBAKE_CONFIG, or ./prebake.yaml) or $PREBAKE_STORE. --status and
   --kill (standalone cluster mode) go to the real spark-submit unchanged.

The connection ``spark_local`` names the master, e.g.
``AIRFLOW_CONN_SPARK_LOCAL='{"conn_type": "spark", "host": "local[2]"}'``.
PREBAKE_EXAMPLE_APP and PREBAKE_EXAMPLE_PACKAGES point the DAG at a job; the defaults are
the repository's demo (testdata/spark-demo), which the test of this DAG runs with
``airflow dags test`` (examples/airflow_it_test.go).
"""

import os
import shlex
from datetime import datetime

from airflow import DAG
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.operators.bash import BashOperator

APP = os.environ.get("PREBAKE_EXAMPLE_APP", "/opt/jobs/greeting/app.py")
PACKAGES = os.environ.get("PREBAKE_EXAMPLE_PACKAGES", "dev.prebake.demo:greeting:1.0")

with DAG(
    dag_id="spark_local_prebake",
    start_date=datetime(2026, 1, 1),
    schedule=None,
    catchup=False,
) as dag:
    prebake_submit = BashOperator(
        task_id="prebake_submit",
        bash_command=" ".join(
            ["prebake", "submit", "-o", "json", "--", "--master", "'local[2]'",
             "--name", "greeting-prebake", "--packages", shlex.quote(PACKAGES), shlex.quote(APP)]
        ),
        append_env=True,
    )
    spark_submit_operator = SparkSubmitOperator(
        task_id="spark_submit_operator",
        conn_id="spark_local",
        application=APP,
        packages=PACKAGES,
        name="greeting-operator",
        verbose=False,
    )
    prebake_submit >> spark_submit_operator
