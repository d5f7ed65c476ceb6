package spark

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// TestK8sPyDepsAirflow (issue 44, the Must's Airflow task): Airflow's own
// SparkSubmitOperator, unchanged (testdata/pydeps/airflow_pydeps_dag.py),
// runs app.py in K8s cluster mode with prebake installed as the
// spark-submit on PATH in front of the real one. The operator passes only
// spark-submit's arguments (--packages spark-avro among them): the job's
// Python requirements, the lock and the image target reach prebake through
// prebake.yaml (pyRequirements, lock, frozen) and PREBAKE_IMAGE_TARGET.
// prebake bakes both halves onto the team's image; the driver and the
// executors' UDF import the packages from it, the task succeeds, and after
// prebake resolve (run beforehand, the team's CI step) neither index had a
// request.
func TestK8sPyDepsAirflow(t *testing.T) {
	t.Parallel()
	j := newPyJourney(t, "pydeps-airflow")
	airflowBin := testenv.Airflow(t)
	j.resolve(t)
	tmp := t.TempDir()
	bin := prebakeAsSparkSubmit(t, tmp)
	cfg := filepath.Join(tmp, "prebake.yaml")
	yaml := "cache: " + j.cache + "\nlock: " + j.lock + "\nfrozen: true\npyRequirements: " + j.reqs +
		"\nrepositories: [" + j.maven.URL + "]\nnoDefaultRepositories: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := newAirflow(t, airflowBin, "pydeps/airflow_pydeps_dag.py")
	if a != nil {
		t.Cleanup(func() { os.RemoveAll(a.home) })
	}
	if err != nil {
		t.Fatal(err)
	}
	const name = "pydeps-af"
	target := j.c.Registry + "/af-py-jobs"
	master, conf := j.c.SparkConfMap(j.ns)
	conf["spark.kubernetes.authenticate.submission.oauthTokenFile"] = j.tokenFile
	conf["spark.kubernetes.driver.pod.name"] = name + "-driver"
	conf["spark.kubernetes.container.image"] = j.image
	conf["spark.executor.instances"] = "1"
	for _, role := range []string{"driver", "executor"} {
		conf["spark.kubernetes."+role+".volumes.hostPath.data.mount.path"] = "/data"
		conf["spark.kubernetes."+role+".volumes.hostPath.data.options.path"] = j.data
	}
	confJSON, _ := json.Marshal(conf)
	conn, _ := json.Marshal(map[string]any{"conn_type": "spark", "host": master, "extra": map[string]string{"deploy-mode": "cluster"}})
	appArgs, _ := json.Marshal([]string{"/data/" + name + ".avro"})
	env := append(j.env,
		"PATH="+bin+string(os.PathListSeparator)+airflowBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		// PREBAKE_CACHE empty: prebake.yaml's cache (the one prebake
		// resolve filled) applies, not sparkEnv's fresh one.
		"PREBAKE_SPARK_SUBMIT=", "PREBAKE_CACHE=", "PREBAKE_CONFIG="+cfg, "PREBAKE_IMAGE_TARGET="+target,
		"AIRFLOW_CONN_SPARK_K8S="+string(conn), "PREBAKE_IT_APP_NAME="+name, "PREBAKE_IT_PACKAGES="+avroPackage,
		"PREBAKE_IT_CONF="+string(confJSON), "PREBAKE_IT_APPLICATION=local:///data/app.py", "PREBAKE_IT_ARGS="+string(appArgs))
	log, ok := a.dagsTestWithin(t, 12*time.Minute, "spark_k8s_pydeps", env...)
	if !ok {
		_, driverLog := j.driverLog(t, name)
		t.Fatalf("the task did not succeed:\n%s\ndriver log:\n%s", log, driverLog)
	}
	if !strings.Contains(log, "exit code: 0") {
		t.Errorf("the task's log lacks prebake's \"exit code: 0\":\n%s", log)
	}
	for _, s := range []string{":: resolving dependencies", "Ivy Default Cache"} {
		if strings.Contains(log, s) {
			t.Errorf("Spark resolved packages (%q):\n%s", s, log)
		}
	}
	j.checkPod(t, name, target, inImage)
	j.noIndexAfterResolve(t)
}
