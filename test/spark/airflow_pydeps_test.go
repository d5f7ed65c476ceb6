package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
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
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(prebakeBin, filepath.Join(bin, "spark-submit")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(tmp, "prebake.yaml")
	yaml := "cache: " + j.cache + "\nlock: " + j.lock + "\nfrozen: true\npyRequirements: " + j.reqs +
		"\nrepositories: [" + j.maven.URL + "]\nnoDefaultRepositories: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	dags := filepath.Join(tmp, "dags")
	if err := os.MkdirAll(dags, 0o755); err != nil {
		t.Fatal(err)
	}
	dag, err := os.ReadFile(filepath.Join("testdata", "pydeps", "airflow_pydeps_dag.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dags, "airflow_pydeps_dag.py"), dag, 0o644); err != nil {
		t.Fatal(err)
	}
	const name = "pydeps-af"
	target := j.c.Registry + "/af-py-jobs"
	args := j.c.SparkConf(j.ns)
	master, conf := "", map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--master":
			master = args[i+1]
		case "--conf":
			k, v, _ := strings.Cut(args[i+1], "=")
			conf[k] = v
		}
	}
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
	home := pydepsAirflowHome(t, airflowBin, filepath.Join(tmp, "airflow"))
	env := append(j.env,
		"PATH="+bin+string(os.PathListSeparator)+airflowBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AIRFLOW_HOME="+home, "AIRFLOW__CORE__DAGS_FOLDER="+dags, "AIRFLOW__CORE__LOAD_EXAMPLES=False",
		"AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT=300", // the providers' import, on 2 loaded cores
		// PREBAKE_CACHE empty: prebake.yaml's cache (the one prebake
		// resolve filled) applies, not sparkEnv's fresh one.
		"PREBAKE_SPARK_SUBMIT=", "PREBAKE_CACHE=", "PREBAKE_CONFIG="+cfg, "PREBAKE_IMAGE_TARGET="+target,
		"AIRFLOW_CONN_SPARK_K8S="+string(conn), "PREBAKE_IT_APP_NAME="+name, "PREBAKE_IT_PACKAGES="+avroPackage,
		"PREBAKE_IT_CONF="+string(confJSON), "PREBAKE_IT_APPLICATION=local:///data/app.py", "PREBAKE_IT_ARGS="+string(appArgs))
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(airflowBin, "airflow"), "dags", "test", "spark_k8s_pydeps")
	cmd.Dir, cmd.Env = tmp, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	runErr := cmd.Run()
	log := out.String()
	t.Logf("airflow dags test spark_k8s_pydeps: %s (exit %v)", time.Since(start).Round(100*time.Millisecond), runErr)
	if !strings.Contains(log, "state=success") || strings.Contains(log, "state=failed") {
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

// pydepsAirflowHome is an Airflow home at dir with a migrated database: a copy
// of the one hack's Airflow tests keep in the CI cache (the migration,
// about 30 s, runs once per machine), else migrated here.
func pydepsAirflowHome(t *testing.T, airflowBin, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cached := filepath.Join(testenv.CacheDir(), "airflow-db-"+filepath.Base(filepath.Dir(airflowBin)))
	cfg, err := os.ReadFile(filepath.Join(cached, "airflow.cfg"))
	if err == nil {
		db, err := os.ReadFile(filepath.Join(cached, "airflow.db"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "airflow.db"), db, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "airflow.cfg"), bytes.ReplaceAll(cfg, []byte(cached), []byte(dir)), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	migrate := exec.Command(filepath.Join(airflowBin, "airflow"), "db", "migrate")
	migrate.Dir, migrate.Env = dir, append(os.Environ(), "AIRFLOW_HOME="+dir, "HOME="+t.TempDir(), "AIRFLOW__CORE__LOAD_EXAMPLES=False")
	if b, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("airflow db migrate: %v\n%s", err, b)
	}
	return dir
}
