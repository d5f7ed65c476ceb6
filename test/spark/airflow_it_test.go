package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
)

// airflowEnv is the Airflow of the test binary: a DAG folder holding the
// DAGs of testdata/k8s and a migrated Airflow home (db: its database and
// configuration) that each run copies (clone).
type airflowEnv struct {
	bin, home, dags, db string
	env                 []string
}

var airflowHome testenv.Shared[*airflowEnv]

// sharedAirflow is the test binary's Airflow (real Airflow,
// hack/infra.d/70-airflow.sh); each run adds its own environment.
func sharedAirflow(t *testing.T) *airflowEnv {
	t.Helper()
	bin := testenv.Airflow(t)
	return airflowHome.Get(t, func() (*airflowEnv, error) {
		return newAirflow(t, bin, "k8s/airflow_k8s_dag.py", "k8s/airflow_kpo_dag.py")
	})
}

// removeAirflow removes the test binary's Airflow home (TestMain).
func removeAirflow() {
	airflowHome.Close(func(a *airflowEnv) {
		if a != nil {
			os.RemoveAll(a.home)
		}
	})
}

// newAirflow is an Airflow (bin) whose DAG folder holds dagFiles (under
// testdata) and whose home is migrated once per machine; its caller
// removes a.home.
func newAirflow(t *testing.T, bin string, dagFiles ...string) (*airflowEnv, error) {
	home, err := os.MkdirTemp("", "prebake-airflow-")
	if err != nil {
		return nil, err
	}
	a := &airflowEnv{bin: bin, home: home, dags: filepath.Join(home, "dags")}
	if err := os.MkdirAll(a.dags, 0o755); err != nil {
		return nil, err
	}
	for _, f := range dagFiles {
		dag, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(a.dags, filepath.Base(f)), dag, 0o644); err != nil {
			return nil, err
		}
	}
	// The DAG files import the providers: at load 25 on 2 cores, with two
	// runs at once, that took longer than Airflow's 30 s import timeout
	// (measured: "DagBag import timeout ... after 30.0s", the task never ran).
	a.env = append(os.Environ(), "KUBECONFIG=", "AIRFLOW__CORE__DAGS_FOLDER="+a.dags, "AIRFLOW__CORE__LOAD_EXAMPLES=False",
		"AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT=300")
	a.db, err = a.migrated(t)
	return a, err
}

// migrated is an Airflow home whose database `airflow db migrate` set up,
// kept in $PREBAKE_CI_CACHE by the Airflow installation's name (its
// versions): the migration (27 s, idle machine) runs once per machine,
// not once per test binary. Runs never write to it: they copy it.
func (a *airflowEnv) migrated(t *testing.T) (string, error) {
	dir := filepath.Join(testenv.CacheDir(), "airflow-db-"+filepath.Base(filepath.Dir(a.bin)))
	if _, err := os.Stat(filepath.Join(dir, "airflow.cfg")); err == nil {
		t.Logf("airflow db: %s (cached)", dir)
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".part-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	migrate := exec.Command(filepath.Join(a.bin, "airflow"), "db", "migrate")
	migrate.Dir, migrate.Env = tmp, append(slices.Clip(a.env), "HOME="+filepath.Join(tmp, "home"), "AIRFLOW_HOME="+tmp)
	if b, err := migrate.CombinedOutput(); err != nil {
		return "", fmt.Errorf("airflow db migrate: %v\n%s", err, b)
	}
	t.Logf("airflow db migrate: %s", time.Since(start).Round(100*time.Millisecond))
	cfg := filepath.Join(tmp, "airflow.cfg")
	b, err := os.ReadFile(cfg)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(cfg, bytes.ReplaceAll(b, []byte(tmp), []byte(dir)), 0o600); err != nil {
		return "", err
	}
	os.RemoveAll(filepath.Join(tmp, "home"))
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "airflow.cfg")); serr != nil { // not another binary's
			return "", err
		}
	}
	return dir, nil
}

// clone is a copy of a's migrated home (its database and configuration,
// the paths in it moved) in a directory of t's, sharing a's DAG folder:
// `airflow dags test` runs of different clones can run at once (one
// SQLite database each), and a clone costs a copy, not a migration.
func (a *airflowEnv) clone(t *testing.T) *airflowEnv {
	t.Helper()
	home := t.TempDir()
	to := filepath.Join(home, "airflow")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"airflow.db", "airflow.cfg"} {
		b, err := os.ReadFile(filepath.Join(a.db, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "airflow.cfg" {
			b = bytes.ReplaceAll(b, []byte(a.db), []byte(to))
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &airflowEnv{bin: a.bin, home: home, dags: a.dags, db: to,
		env: append(slices.Clip(a.env), "HOME="+filepath.Join(home, "home"), "AIRFLOW_HOME="+to)}
}

// dagsTest runs `airflow dags test dag` in a clone of a's home with env
// added; it returns the output and whether Airflow marked the task a
// success.
func (a *airflowEnv) dagsTest(t *testing.T, dag string, env ...string) (string, bool) {
	t.Helper()
	return a.dagsTestWithin(t, 8*time.Minute, dag, env...)
}

// dagsTestWithin is dagsTest with the run's time limit.
func (a *airflowEnv) dagsTestWithin(t *testing.T, limit time.Duration, dag string, env ...string) (string, bool) {
	t.Helper()
	a = a.clone(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(a.bin, "airflow"), "dags", "test", dag)
	cmd.Dir, cmd.Env = a.home, append(append([]string(nil), a.env...), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("airflow dags test %s: %s (exit %v)", dag, time.Since(start).Round(100*time.Millisecond), runErr)
	s := out.String()
	success := strings.Contains(s, "state=success") || strings.Contains(s, "new_state=success")
	failed := strings.Contains(s, "new_state=failed") || strings.Contains(s, "state=failed")
	if success == failed {
		t.Fatalf("cannot tell the task's state from the run (success %v, failed %v):\n%s", success, failed, s)
	}
	return s, success
}

// prebakeAsSparkSubmit is dir/bin holding prebake as spark-submit, for
// the front of an Airflow task's PATH.
func prebakeAsSparkSubmit(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(prebakeBin, filepath.Join(bin, "spark-submit")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestK8sAirflowIT is journey 7 of issue 25 on the real node: Airflow's
// SparkSubmitOperator, unchanged (testdata/k8s/airflow_k8s_dag.py), K8s
// cluster mode, prebake installed as spark-submit in front of the real
// spark-submit (pyspark 3.5.9). prebake resolves
// dev.prebake.demo:greeting:1.0, bakes it onto the team's image in the
// node's registry, and a real driver pod runs NodeApp, which calls the
// baked class (then counts on an executor pod, or exits 3): a succeeding
// job is a task success (ux-3
// finding 1: the provider fails a cluster-mode task unless the output has
// an "exit code: N" line), a driver exiting 3 a task failure carrying 3.
func TestK8sAirflowIT(t *testing.T) {
	testenv.RequireIT(t)
	c := k8scluster.Start(t)
	sparkHome, _ := testenv.SparkHome(t, k8scluster.NodeSparkVersion)
	app := c.NodeAppImage(t)
	tmp := t.TempDir()
	bin := prebakeAsSparkSubmit(t, tmp)
	cfg := filepath.Join(tmp, "prebake.yaml")
	if err := os.WriteFile(cfg, []byte("cache: "+filepath.Join(tmp, "cache")+"\nrepositories: ["+demoRepo()+"]\nnoDefaultRepositories: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(tmp, "token")
	if err := os.WriteFile(tokenFile, []byte(c.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	airflowBin := testenv.Airflow(t)
	a := sharedAirflow(t)
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + airflowBin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"SPARK_HOME=" + sparkHome, "SPARK_CONF_DIR=" + t.TempDir(), "SPARK_LOCAL_IP=127.0.0.1", "PREBAKE_SPARK_SUBMIT=",
		"PREBAKE_CONFIG=" + cfg, "PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=" + c.Registry + "/af-jobs",
		"DOCKER_CONFIG=" + t.TempDir(), "PREBAKE_CACHE=",
	}
	run := func(t *testing.T, ns string, args ...string) (string, bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := c.SparkNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		master, conf := c.SparkConfMap(ns)
		conf["spark.kubernetes.authenticate.submission.oauthTokenFile"] = tokenFile
		conf["spark.kubernetes.container.image"] = app
		conf["spark.executor.instances"] = "1" // tiny: one executor pod
		confJSON, err := json.Marshal(conf)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := json.Marshal(map[string]any{"conn_type": "spark", "host": master,
			"extra": map[string]string{"deploy-mode": "cluster"}})
		if err != nil {
			t.Fatal(err)
		}
		argsJSON, _ := json.Marshal(args)
		start := time.Now()
		out, ok := a.dagsTest(t, "spark_k8s_prebake", append(slices.Clip(env), "AIRFLOW_CONN_SPARK_K8S="+string(conn),
			"PREBAKE_IT_APP_NAME=af-"+ns, "PREBAKE_IT_PACKAGES=dev.prebake.demo:greeting:1.0", "PREBAKE_IT_CONF="+string(confJSON),
			"PREBAKE_IT_APPLICATION=local:///opt/spark/app/app.jar", "PREBAKE_IT_CLASS=NodeApp", "PREBAKE_IT_ARGS="+string(argsJSON))...)
		pod, log := c.DriverPod(ctx, ns)
		t.Logf("%s: task %s in %s; driver exit code %d", ns, map[bool]string{true: "success", false: "failed"}[ok],
			time.Since(start).Round(100*time.Millisecond), k8scluster.DriverExitCode(pod))
		if pod == nil {
			t.Fatalf("no single driver pod in %s:\n%s", ns, out)
		}
		if img := pod.Spec.Containers[0].Image; !strings.HasPrefix(img, c.Registry+"/af-jobs") {
			t.Errorf("driver image %s, want the baked image in %s/af-jobs", img, c.Registry)
		}
		if !k8scluster.NodeAppRan(log, len(args) == 0) {
			t.Errorf("the driver did not run the baked class:\n%s", log)
		}
		for _, s := range []string{":: resolving dependencies", "Ivy Default Cache"} {
			if strings.Contains(out, s) || strings.Contains(log, s) {
				t.Errorf("Spark resolved packages (%q):\n%s\ndriver log:\n%s", s, out, log)
			}
		}
		return out, ok
	}
	taskEnds(t, run, []taskCase{
		// The line the provider's hook reads: prebake's final statuses.
		{"succeeded", "af-ok", nil, true, "exit code: 0"},
		// The task's error carries the driver's exit code.
		{"failed", "af-fail", []string{"3"}, false, "Error code is: 3"},
	})
}

// taskCase is one Airflow run of a journey: the driver's arguments, whether
// the task succeeds, and a line its log holds.
type taskCase struct {
	name, ns string
	args     []string
	ok       bool
	want     string
}

// taskEnds runs each case as a subtest through run (one `airflow dags
// test`, in its own namespace and Airflow home), checking the task's end
// and its log. The cases run one after the other: run at once on the 2
// shared cores they gained nothing (measured: tasks of 311 s and 108 s one
// after the other at load 15-19, 323 s and 425 s at once at load 25-29),
// and two Airflows importing the providers at once overran Airflow's DAG
// import timeout.
func taskEnds(t *testing.T, run func(t *testing.T, ns string, args ...string) (string, bool), cases []taskCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := run(t, tc.ns, tc.args...)
			if ok != tc.ok {
				t.Errorf("task success %v, want %v (driver args %q):\n%s", ok, tc.ok, tc.args, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("the task's log lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// TestK8sAirflowPodOperatorIT is journey 8 of issue 25 on the real node
// (the third seed's architecture): Airflow's KubernetesPodOperator
// (testdata/k8s/airflow_kpo_dag.py) runs prebake's own image (`make image`,
// pushed to the node's registry) as the task pod with an in-cluster
// service account (a Role for driver pods, ConfigMaps and Services in the
// job's namespace), and the pod runs `prebake submit --submitter native`
// against https://kubernetes.default.svc (kube-proxy, the cluster DNS). The
// driver image was baked beforehand on the host (`prebake bake image`, the
// CI step) with dev.prebake.demo:greeting:1.0, and the task passes the
// settings it printed. A succeeding
// driver ends the task a success, a driver exiting 3 a task failure.
func TestK8sAirflowPodOperatorIT(t *testing.T) {
	testenv.RequireIT(t)
	c := k8scluster.Start(t)
	image := c.PrebakeImage(t)
	app := c.NodeAppImage(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// The CI step: bake the package into the team's image.
	bake := exec.CommandContext(ctx, prebakeBin, "bake", "image", "--base", app, "--target", c.Registry+"/kpo-jobs",
		"--cache", filepath.Join(tmp, "cache"),
		"--no-default-repositories", "--repositories", demoRepo(), "dev.prebake.demo:greeting:1.0")
	bake.Env = append(os.Environ(), "HOME="+tmp, "DOCKER_CONFIG="+t.TempDir(), "PREBAKE_CONFIG=", "PREBAKE_CACHE=")
	out, err := bake.Output()
	if err != nil {
		t.Fatalf("prebake bake image: %v\n%s", err, out)
	}
	// stdout: the image, then the Spark settings that use it.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	baked := lines[0]
	t.Logf("baked %s", baked)
	conn, err := json.Marshal(map[string]any{"conn_type": "kubernetes", "extra": map[string]any{"kube_config_path": c.Kubeconfig, "in_cluster": false}})
	if err != nil {
		t.Fatal(err)
	}
	a := sharedAirflow(t)
	run := func(t *testing.T, ns string, appArgs ...string) (string, bool) {
		t.Helper()
		if err := c.SparkNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		c.SubmitterAccount(ctx, t, ns, "prebake-submit")
		_, conf := c.SparkConfMap(ns)
		delete(conf, "spark.kubernetes.authenticate.submission.caCertFile") // the pod's own service account
		for _, l := range lines[1:] {
			k, v, _ := strings.Cut(l, "=")
			conf[k] = v
		}
		conf["spark.executor.instances"] = "1"
		args := []string{"submit", "--submitter", "native", "--spark-version", k8scluster.NodeSparkVersion, "--",
			"--master", "k8s://https://kubernetes.default.svc", "--deploy-mode", "cluster", "--name", "kpo-" + ns, "--class", "NodeApp"}
		for k, v := range conf {
			args = append(args, "--conf", k+"="+v)
		}
		args = append(append(args, "local:///opt/spark/app/app.jar"), appArgs...)
		argsJSON, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, ok := a.dagsTest(t, "prebake_kpo", "AIRFLOW_CONN_KUBERNETES_DEFAULT="+string(conn), "PREBAKE_IT_NAMESPACE="+ns, "PREBAKE_IT_IMAGE="+image,
			"PREBAKE_IT_SERVICE_ACCOUNT=prebake-submit", "PREBAKE_IT_ARGS="+string(argsJSON))
		pod, log := c.DriverPod(ctx, ns)
		t.Logf("%s: task %s in %s; driver exit code %d", ns, map[bool]string{true: "success", false: "failed"}[ok],
			time.Since(start).Round(100*time.Millisecond), k8scluster.DriverExitCode(pod))
		if pod == nil {
			t.Fatalf("no single driver pod in %s:\n%s", ns, out)
		}
		if !k8scluster.NodeAppRan(log, len(appArgs) == 0) {
			t.Errorf("the driver did not run the baked class:\n%s", log)
		}
		return out, ok
	}
	// The task's log is the pod's: prebake's summary and final statuses.
	// The summary names the outcome of the driver container's end, even
	// when the pod's phase still read Running then (review ux-4, LOW 3).
	taskEnds(t, run, []taskCase{
		{"succeeded", "kpo-ok", nil, true, " Succeeded exit=0 source=driver"},
		{"failed", "kpo-fail", []string{"3"}, false, "exit code: 3"},
	})
}
