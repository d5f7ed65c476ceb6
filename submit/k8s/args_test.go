package k8s

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

// loadArgs is submit.LoadSubmission of args with the environment env.
func loadArgs(args []string, env map[string]string) (*submit.Submission, error) {
	return submit.LoadSubmission(args, testenv.Environ(env))
}

// mustLoad is submit.LoadSubmission of args with the environment environ
// (nil: an empty one), as cmd loads a submission before the backend runs it.
func mustLoad(t testing.TB, args []string, environ []string) *submit.Submission {
	t.Helper()
	sub, err := submit.LoadSubmission(args, environ)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// mustK8sArgs is the K8s view of args loaded with an empty environment.
func mustK8sArgs(t *testing.T, args ...string) *k8sArgs {
	t.Helper()
	sub, err := loadArgs(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	return newK8sArgs(sub)
}

func TestParseK8sArgs(t *testing.T) {
	args := []string{
		"--master", "k8s://https://k8s.example:6443", "--deploy-mode=cluster", "--name", "My App",
		"--conf", "spark.kubernetes.namespace=etl", "-c", "spark.x=1", "--conf=spark.x=2",
		"--verbose", "--class", "com.example.Main", "local:///opt/app.jar", "--conf", "not.ours=1",
	}
	sub, err := loadArgs(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := newK8sArgs(sub)
	res, _ := sub.Primary()
	got := map[string]any{
		"master": a.master, "name": a.appName(), "class": sub.MainClass(), "deploy": a.deployMode(),
		"resource": res, "ns": a.namespace(), "conf": a.conf,
	}
	want := map[string]any{
		"master": "k8s://https://k8s.example:6443", "name": "My App", "class": "com.example.Main",
		"deploy": "cluster", "resource": args[13], "ns": "etl",
		"conf": map[string]string{"spark.kubernetes.namespace": "etl", "spark.x": "2"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parse (-want +got):\n%s", d)
	}
	with := a.withConf("spark.kubernetes.submission.waitAppCompletion", "false", "spark.kubernetes.driver.pod.name", "p")
	wantArgs := append(append(append([]string{}, args[:13]...),
		"--conf", "spark.kubernetes.submission.waitAppCompletion=false",
		"--conf", "spark.kubernetes.driver.pod.name=p"), args[13:]...)
	if d := cmp.Diff(wantArgs, with); d != "" {
		t.Errorf("withConf (-want +got):\n%s", d)
	}
}

func TestParseK8sArgsErrors(t *testing.T) {
	for _, args := range [][]string{{"--master"}, {"--conf", "novalue", "x.jar"}} {
		if _, err := loadArgs(args, nil); err == nil {
			t.Errorf("LoadSubmission(%q): want an error", args)
		}
	}
}

func TestSanitizeResourcePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"My App-1a2b3c":          "my-app-1a2b3c",
		"--spark__pi--x":         "spark-pi-x",
		"9lives-abc":             "xlives-abc",
		"com.example.Main-0f0f0": "com-example-main-0f0f0",
		" Tab\tName ":            "tab-name",
	} {
		if got := sanitizeResourcePrefix(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDriverPodName(t *testing.T) {
	now := time.UnixMilli(0x12_3456_789A)
	a := mustK8sArgs(t, "--class", "org.apache.spark.examples.SparkPi", "app.jar")
	name := a.driverPodName(now)
	if !regexp.MustCompile(`^org-apache-spark-examples-sparkpi-[0-9a-f]{6}123456789a-driver$`).MatchString(name) {
		t.Errorf("generated name %q does not look like Spark's", name)
	}
	a = mustK8sArgs(t, "--conf", "spark.kubernetes.driver.pod.name=given", "app.jar")
	if got := a.driverPodName(now); got != "given" {
		t.Errorf("given name: got %q", got)
	}
	a = mustK8sArgs(t, "/x/y/app.py")
	if got := a.driverPodName(now); !strings.HasPrefix(got, "app-py-") {
		t.Errorf("name from resource: got %q", got)
	}
}

func TestPropertiesDefaults(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "spark-defaults.conf")
	if err := os.WriteFile(p, []byte("# c\nspark.kubernetes.namespace  team\nspark.a=1\nspark.b : 2\nother.key 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub, err := loadArgs([]string{"--conf", "spark.a=cli", "app.jar"}, map[string]string{"SPARK_CONF_DIR": dir})
	if err != nil {
		t.Fatal(err)
	}
	a := newK8sArgs(sub)
	want := map[string]string{"spark.a": "cli", "spark.b": "2", "spark.kubernetes.namespace": "team"}
	if d := cmp.Diff(want, a.conf); d != "" {
		t.Errorf("conf (-want +got):\n%s", d)
	}
}

func TestAPIServerURL(t *testing.T) {
	for in, want := range map[string]string{
		"k8s://https://h:6443": "https://h:6443",
		"k8s://h:6443":         "https://h:6443",
		"k8s://http://h:8080":  "http://h:8080",
	} {
		got, err := apiServerURL(in)
		if err != nil || got != want {
			t.Errorf("apiServerURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := apiServerURL("spark://h:7077"); err == nil {
		t.Error("spark:// master: want an error")
	}
}

func TestSparkApplication(t *testing.T) {
	sub, err := loadArgs([]string{
		"--master", "k8s://https://h:6443", "--deploy-mode", "cluster", "--name", "etl",
		"--class", "com.example.Main", "--jars", "s3a://b/sets/1/a.jar,s3a://b/sets/1/b.jar",
		"--driver-memory", "2g", "--executor-cores=2", "--num-executors", "3",
		"--conf", "spark.kubernetes.namespace=data", "--conf", "spark.kubernetes.container.image=img:1",
		"--conf", confOAuthToken + "=secret", "--conf", "spark.kubernetes.submission.waitAppCompletion=false",
		"--conf", "spark.executor.memoryOverhead=1g",
		"s3a://b/app.jar", "--day", "2026-11-29",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := sparkApplication(newK8sArgs(sub), "etl-1", "3.5.3")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
		"metadata": map[string]any{"name": "etl-1", "namespace": "data", "labels": map[string]any{"app.kubernetes.io/managed-by": "prebake"}},
		"spec": map[string]any{
			"type": "Scala", "mode": "cluster", "sparkVersion": "3.5.3", "image": "img:1",
			"mainClass": "com.example.Main", "mainApplicationFile": "s3a://b/app.jar",
			"arguments":     []any{"--day", "2026-11-29"},
			"restartPolicy": map[string]any{"type": "Never"},
			"driver":        map[string]any{"memory": "2g"},
			"executor":      map[string]any{"cores": int64(2), "instances": int64(3)},
			"deps":          map[string]any{"jars": []any{"s3a://b/sets/1/a.jar", "s3a://b/sets/1/b.jar"}},
			"sparkConf": map[string]any{
				"spark.kubernetes.namespace": "data", "spark.kubernetes.container.image": "img:1",
				"spark.executor.memoryOverhead": "1g",
			},
		},
	}
	if d := cmp.Diff(want, u.Object); d != "" {
		t.Errorf("SparkApplication (-want +got):\n%s", d)
	}
}
