package k8s

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s/native"
	"github.com/prebake/prebake/submit/local"
	"github.com/prebake/prebake/submit/rest"
)

// TestBackendsAgreeWithModel: every backend reads the master and the
// deploy mode of one submit.Submission, so each sees what the model says
// (SparkSubmitArguments: flag, then conf, then $MASTER / $DEPLOY_MODE).
// Before the model was shared, the K8s backend and the native submitter
// ignored $DEPLOY_MODE and K8s ignored $MASTER.
func TestBackendsAgreeWithModel(t *testing.T) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(path, body string) {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	props := filepath.Join(dir, "job.conf")
	write(props, "spark.submit.deployMode=cluster\n")
	app := []string{"--conf", "spark.kubernetes.container.image=img", "--class", "M", "local:///a.jar"}

	tests := []struct {
		name     string
		args     []string          // MASTER is replaced with the master under test
		env      map[string]string // MASTER likewise; SPARK_CONF_DIR: a spark-defaults.conf that sets both
		wantMode string
	}{
		{"DEPLOY_MODE=cluster, no flag", []string{"--master", "MASTER"}, map[string]string{"DEPLOY_MODE": "cluster"}, "cluster"},
		{"MASTER from the environment", []string{"--deploy-mode", "cluster"}, map[string]string{"MASTER": "MASTER"}, "cluster"},
		{"the flag beats DEPLOY_MODE", []string{"--master", "MASTER", "--deploy-mode", "client"}, map[string]string{"DEPLOY_MODE": "cluster"}, "client"},
		{"--conf beats DEPLOY_MODE", []string{"--master", "MASTER", "--conf", "spark.submit.deployMode=cluster"}, map[string]string{"DEPLOY_MODE": "client"}, "cluster"},
		{"the properties file beats DEPLOY_MODE", []string{"--master", "MASTER", "--properties-file", props}, map[string]string{"DEPLOY_MODE": "client"}, "cluster"},
		{"spark-defaults.conf", nil, map[string]string{"SPARK_CONF_DIR": "set"}, "cluster"},
		{"nothing: client mode", []string{"--master", "MASTER"}, nil, "client"},
	}
	for _, master := range []string{"k8s://https://h:6443", "spark://m:7077"} {
		for _, tt := range tests {
			t.Run(submit.ClusterKind(master)+"/"+tt.name, func(t *testing.T) {
				env := map[string]string{}
				for k, v := range tt.env {
					env[k] = strings.ReplaceAll(v, "MASTER", master)
				}
				if tt.env["SPARK_CONF_DIR"] != "" {
					// spark-defaults.conf names the master under test.
					d := t.TempDir()
					write(filepath.Join(d, "spark-defaults.conf"), "spark.master "+master+"\nspark.submit.deployMode cluster\n")
					env["SPARK_CONF_DIR"] = d
				}
				var args []string
				for _, a := range tt.args {
					args = append(args, strings.ReplaceAll(a, "MASTER", master))
				}
				args = append(args, app...)
				sub := mustLoad(t, args, mapEnv(env))
				if sub.Master() != master || sub.DeployMode() != tt.wantMode {
					t.Fatalf("model: %s %s, want %s %s", sub.Master(), sub.DeployMode(), master, tt.wantMode)
				}
				want := map[string]string{"master": master, "deployMode": tt.wantMode}

				// K8s (spark-submit submitter).
				a := newK8sArgs(sub)
				if d := cmp.Diff(want, map[string]string{"master": a.master, "deployMode": a.deployMode()}); d != "" {
					t.Errorf("k8s (-model +backend):\n%s", d)
				}
				// Local: whether the driver runs here, and its result.
				lb, err := local.New(local.WithSparkSubmit(trueBin))
				if err != nil {
					t.Fatal(err)
				}
				out, _ := lb.Submit(context.Background(), &submit.Prepared{Sub: sub})
				res := out.(*local.Result)
				if d := cmp.Diff(want, map[string]string{"master": res.Master, "deployMode": res.DeployMode}); d != "" {
					t.Errorf("local (-model +backend):\n%s", d)
				}
				switch submit.ClusterKind(master) {
				case submit.ClusterK8s:
					in, err := native.FromSubmission(sub, "3.5.9", env)
					if tt.wantMode == "client" {
						var ue *native.UnsupportedError
						if !errors.As(err, &ue) || ue.Option != "--deploy-mode" {
							t.Errorf("native: %v, want client mode refused", err)
						}
						return
					}
					if err != nil {
						t.Fatalf("native: %v", err)
					}
					got := map[string]string{"master": in.Conf["spark.master"], "deployMode": in.Conf["spark.submit.deployMode"]}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("native (-model +backend):\n%s", d)
					}
				case submit.ClusterStandalone:
					if got := submit.RunsHere(sub); got != (tt.wantMode == "client") {
						t.Errorf("submit.RunsHere = %v in %s mode", got, tt.wantMode)
					}
					req, err := rest.BuildCreateRequest(sub)
					if tt.wantMode == "client" {
						if err == nil || !strings.Contains(err.Error(), `deploy mode "client"`) {
							t.Errorf("rest: %v, want client mode refused", err)
						}
						return
					}
					if err != nil {
						t.Fatalf("rest: %v", err)
					}
					got := map[string]string{"master": req.SparkProperties["spark.master"], "deployMode": req.SparkProperties["spark.submit.deployMode"]}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("rest (-model +backend):\n%s", d)
					}
				}
			})
		}
	}
}
