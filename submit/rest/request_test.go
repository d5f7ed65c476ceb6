package rest

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

var updateRest = flag.Bool("update", false, "rewrite the golden files in testdata/rest")

// TestRestRequestGolden pins the exact bytes sent to /v1/submissions/create
// (Jackson layout, alphabetic keys, nulls omitted) for a few command lines.
func TestRestRequestGolden(t *testing.T) {
	env := []string{"SPARK_SCALA_VERSION=2.12", "SPARK_HOME=/opt/spark", "SPARK_ENV_LOADED=1", "SPARK_CONF_DIR=/nonexistent",
		"MESOS_NATIVE_JAVA_LIBRARY=/usr/lib/libmesos.so", "PATH=/usr/bin", "HOME=/root"}
	tests := []struct {
		name    string
		args    []string
		version string
	}{
		{"standalone", []string{"--master", "spark://m1:7077,m2:7077", "--deploy-mode", "cluster", "--class", "com.example.Main",
			"--jars", "s3a://bucket/prebake/jars/a_b-1.0.jar,s3a://bucket/prebake/jars/c_d-2.0.jar",
			"--conf", "spark.executor.memory=2g", "--conf=spark.eventLog.enabled=true", "--supervise",
			"--driver-memory", "1g", "--name", "nightly <etl> & \"quotes\"",
			"hdfs:///apps/app.jar", "--date", "2026-11-29", ""}, ""},
		{"no-app-args-default-name", []string{"--master=spark://m:7077", "--deploy-mode=cluster", "--class", "com.example.Main", "local:///opt/app.jar"}, ""},
		{"mesos-python", []string{"--master", "mesos://dispatcher:7077", "--deploy-mode", "cluster", "--py-files", "http://h/dep.zip", "http://h/job.py", "a1"}, ""},
		{"spark4-env", []string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "--class", "C", "--conf", "spark.jars.ivy=/tmp/ivy", "app.jar"}, "4.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := buildCreate(tt.args, env, WithClientSparkVersion(tt.version))
			if err != nil {
				t.Fatal(err)
			}
			got, err := req.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "rest", tt.name+".json")
			if *updateRest {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("request bytes differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestRequestErrors(t *testing.T) {
	base := []string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "--class", "C"}
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr error
	}{
		{"packages flag", append(append([]string{}, base...), "--packages", "g:a:1", "app.jar"), "DriverWrapper would resolve it again", ErrPackages},
		{"packages conf", append(append([]string{}, base...), "--conf", "spark.jars.packages=g:a:1", "app.jar"), "DriverWrapper", ErrPackages},
		{"client mode", []string{"--master", "spark://m:7077", "--class", "C", "app.jar"}, "cluster mode only", nil},
		{"python standalone", []string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "job.py"}, "not supported for Python", nil},
		{"no class", []string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "app.jar"}, "add --class", nil},
		{"no resource", base, "no primary resource", nil},
		{"k8s master", []string{"--master", "k8s://https://h", "--deploy-mode", "cluster", "--class", "C", "app.jar"}, "spark:// or mesos://", nil},
		{"unknown option", append(append([]string{}, base...), "--bogus", "app.jar"), "--bogus", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildCreate(tt.args, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if errdefs.KindOf(err) != errdefs.BadArgument {
				t.Errorf("kind %v, want %v", errdefs.KindOf(err), errdefs.BadArgument)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err %v is not %v", err, tt.wantErr)
			}
		})
	}
}

func TestRestStripsPackageSettings(t *testing.T) {
	var log strings.Builder
	req, err := buildCreate([]string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "--class", "C",
		"--repositories", "https://repo.example/maven", "--conf", "spark.jars.ivySettings=/x.xml", "--conf", "spark.jars.packages=", "app.jar"},
		nil, WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range restPackagesKeys {
		if v, ok := req.SparkProperties[k]; ok {
			t.Errorf("%s=%q reached sparkProperties", k, v)
		}
	}
	if !strings.Contains(log.String(), "spark.jars.ivySettings, spark.jars.repositories") {
		t.Errorf("no warning naming the dropped keys: %q", log.String())
	}
}

func TestRestPropertiesFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spark-defaults.conf"), []byte("# defaults\nspark.executor.cores 3\nspark.app.name=fromfile\nspark.driver.memory: 4g\nother.key=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, err := buildCreate([]string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "--class", "C",
		"--conf", "spark.executor.cores=5", "app.jar"}, []string{"SPARK_CONF_DIR=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"spark.app.name": "fromfile", "spark.driver.memory": "4g", "spark.executor.cores": "5",
		"spark.jars": "app.jar", "spark.master": "spark://m:7077", "spark.submit.deployMode": "cluster",
	}
	if diff := cmp.Diff(want, req.SparkProperties); diff != "" {
		t.Errorf("sparkProperties (-want +got):\n%s", diff)
	}
}

func TestRestEnvFilter(t *testing.T) {
	env := map[string]string{"SPARK_A": "1", "SPARK_HOME": "h", "SPARK_CONF_DIR": "c", "SPARK_ENV_LOADED": "1", "MESOS_X": "m", "OTHER": "o", "SPARK_LOCAL_IP": "10.0.0.1"}
	if diff := cmp.Diff(map[string]string{"SPARK_A": "1", "MESOS_X": "m", "SPARK_LOCAL_IP": "10.0.0.1"}, filterRestEnv(env, "3.5.1")); diff != "" {
		t.Errorf("3.5 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"SPARK_A": "1"}, filterRestEnv(env, "4.0.0")); diff != "" {
		t.Errorf("4.0 (-want +got):\n%s", diff)
	}
}

func TestRestURLs(t *testing.T) {
	tests := []struct {
		master string
		port   int
		want   []string
	}{
		{"spark://m:7077", 0, []string{"http://m:6066"}},
		{"spark://m1:7077,m2", 0, []string{"http://m1:6066", "http://m2:6066"}},
		{"spark://m:6066", 0, []string{"http://m:6066"}},
		{"spark://m:7077,n:7078", 6067, []string{"http://m:6067", "http://n:6067"}},
		{"spark://[::1]:7077", 0, []string{"http://[::1]:6066"}},
		{"mesos://d", 0, []string{"http://d:7077"}},
		{"mesos://d:7000", 0, []string{"http://d:7000"}},
	}
	for _, tt := range tests {
		got, _, err := restURLs(tt.master, tt.port)
		if err != nil {
			t.Fatalf("%s: %v", tt.master, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.master, diff)
		}
	}
	if _, _, err := restURLs("mesos://zk://z:2181/mesos", 0); err == nil {
		t.Error("mesos://zk:// accepted")
	}
}
