"""The DAG of TestK8sAirflowPodOperatorIT: Airflow's KubernetesPodOperator runs
prebake's own image (`make image`) as the task pod, with an in-cluster
service account, and the pod runs `prebake submit` against the cluster it is
in. The task ends with the driver's state (prebake's exit code is the pod's).
The connection kubernetes_default points at the cluster (a kubeconfig); the
test passes the image, namespace, service account and prebake's arguments
(JSON) in the environment."""

import json
import os
from datetime import datetime

from airflow import DAG
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client import models as k8s

with DAG(dag_id="prebake_kpo", start_date=datetime(2026, 1, 1), schedule=None, catchup=False) as dag:
    KubernetesPodOperator(
        task_id="prebake_submit",
        name="prebake-submit",
        namespace=os.environ["PREBAKE_IT_NAMESPACE"],
        image=os.environ["PREBAKE_IT_IMAGE"],
        arguments=json.loads(os.environ["PREBAKE_IT_ARGS"]),
        service_account_name=os.environ["PREBAKE_IT_SERVICE_ACCOUNT"],
        # prebake's image is scratch: its cache goes to a volume.
        volumes=[k8s.V1Volume(name="tmp", empty_dir=k8s.V1EmptyDirVolumeSource())],
        volume_mounts=[k8s.V1VolumeMount(name="tmp", mount_path="/tmp")],
        container_resources=k8s.V1ResourceRequirements(requests={"cpu": "50m", "memory": "64Mi"}),
        get_logs=True,
        on_finish_action="keep_pod",
        startup_timeout_seconds=300,
    )
