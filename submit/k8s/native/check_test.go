package native

import (
	"errors"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

// Every refusal is an *UnsupportedError naming the option and pointing to
// spark-submit (the CLI hints --submitter spark-submit).
func TestRefusals(t *testing.T) {
	base := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.container.image=img"}
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		option string
	}{
		{"upload path", []string{"--conf", "spark.kubernetes.file.upload.path=s3a://b/up", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.file.upload.path"},
		{"local primary jar", []string{"--class", "M", "/home/me/app.jar"}, nil, "primary resource /home/me/app.jar"},
		{"file: py", []string{"file:///home/me/app.py"}, nil, "primary resource file:///home/me/app.py"},
		{"local --jars", []string{"--jars", "dep.jar", "--class", "M", "local:///a.jar"}, nil, "spark.jars"},
		{"local --py-files", []string{"--py-files", "/x/dep.zip", "local:///a.py"}, nil, "spark.submit.pyFiles"},
		{"glob", []string{"--jars", "s3a://b/jars/*.jar", "--class", "M", "local:///a.jar"}, nil, "spark.jars"},
		{"kerberos principal", []string{"--principal", "me@REALM", "--class", "M", "local:///a.jar"}, nil, "--principal"},
		{"kerberos conf", []string{"--conf", "spark.kerberos.keytab=/k", "--class", "M", "local:///a.jar"}, nil, "spark.kerberos.keytab"},
		{"krb5", []string{"--conf", "spark.kubernetes.kerberos.krb5.path=/etc/krb5.conf", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.kerberos.krb5.path"},
		{"hadoop conf dir", []string{"--class", "M", "local:///a.jar"}, map[string]string{"HADOOP_CONF_DIR": "/etc/hadoop"}, "HADOOP_CONF_DIR"},
		{"custom steps", []string{"--conf", "spark.kubernetes.driver.pod.featureSteps=com.x.Step", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.driver.pod.featureSteps"},
		{"volcano", []string{"--conf", "spark.kubernetes.scheduler.volcano.podGroupTemplateFile=/t", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.scheduler.volcano.podGroupTemplateFile"},
		{"driver credentials", []string{"--conf", "spark.kubernetes.authenticate.driver.oauthToken=x", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.authenticate.driver.oauthToken"},
		{"no --class", []string{"local:///a.jar"}, nil, "--class"},
		{"shell", []string{"pyspark-shell"}, nil, "pyspark-shell"},
		{"remote template", []string{"--conf", "spark.kubernetes.driver.podTemplateFile=s3a://b/t.yaml", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.driver.podTemplateFile"},
		{"subPathExpr", []string{"--conf", "spark.kubernetes.driver.volumes.emptyDir.a.mount.path=/a", "--conf", "spark.kubernetes.driver.volumes.emptyDir.a.mount.subPathExpr=$(X)", "--class", "M", "local:///a.jar"}, nil, "spark.kubernetes.driver.volumes.emptyDir.a.mount.subPathExpr"},
		{"--kill", []string{"--kill", "ns:pod"}, nil, "--kill"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := buildArgv(append(append([]string{}, base...), tt.args...), "3.5.9", tt.env)
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("got %v, want an UnsupportedError", err)
			}
			if ue.Option != tt.option {
				t.Errorf("option %q, want %q", ue.Option, tt.option)
			}
			if !strings.Contains(err.Error(), "the native submitter cannot reproduce this") {
				t.Errorf("message %q does not say why", err)
			}
		})
	}
	// PVC labels and annotations: 4.0 sets them on the claims, 3.5 ignores them.
	for _, sub := range []string{"label.team=data", "annotation.note=x"} {
		pvc := append(append([]string{}, base...),
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.d.mount.path=/d",
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.d.options.claimName=OnDemand",
			"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.d."+sub,
			"--class", "M", "local:///a.jar")
		var ue *UnsupportedError
		if err := buildArgv(pvc, "4.0.5", nil); !errors.As(err, &ue) || !strings.HasPrefix(ue.Option, "spark.kubernetes.driver.volumes.persistentVolumeClaim.d.") {
			t.Errorf("4.0.5 PVC %s: %v, want an UnsupportedError naming it", sub, err)
		}
		if err := buildArgv(pvc, "3.5.9", nil); err != nil {
			t.Errorf("3.5.9 PVC %s: %v", sub, err)
		}
	}
	// Client mode and other masters.
	for _, args := range [][]string{
		{"--master", "k8s://https://h:6443", "--class", "M", "local:///a.jar"},
		{"--master", "k8s://https://h:6443", "--deploy-mode", "client", "--class", "M", "local:///a.jar"},
		{"--master", "yarn", "--deploy-mode", "cluster", "--class", "M", "local:///a.jar"},
	} {
		if err := buildArgv(args, "3.5.9", nil); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: %v", args, err)
		}
	}
	// Unknown Spark lines.
	for _, v := range []string{"", "3.4.1", "4.4.0", "5.0.0", "4.1", "4.1."} {
		err := buildArgv(append(append([]string{}, base...), "--class", "M", "local:///a.jar"), v, nil)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || ue.Option != OptionSparkVersion {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

// FromArgv is FromSubmission of args loaded with the environment env.
func FromArgv(args []string, version string, env map[string]string) (*Input, error) {
	sub, err := submit.LoadSubmission(args, testenv.Environ(env))
	if err != nil {
		return nil, err
	}
	return FromSubmission(sub, version, env)
}

func buildArgv(args []string, version string, env map[string]string) error {
	in, err := FromArgv(args, version, env)
	if err != nil {
		return err
	}
	_, err = Build(in)
	return err
}

// FromArgv does what SparkSubmit does to the conf.
func TestFromArgv(t *testing.T) {
	in, err := FromArgv([]string{"--master", "k8s://127.0.0.1:6443", "--deploy-mode=cluster", "--driver-memory", "2g",
		"--conf", "spark.driver.host=ignored", "--conf", "other.key=dropped", "--jars", "local:///a.jar,,https://h/b.jar",
		"--num-executors", "3", "--class", "com.x.Main", "local:///app.jar", "--not-an-option", "x"}, "3.5.9", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"spark.master": "k8s://https://127.0.0.1:6443", "spark.submit.deployMode": "cluster", "spark.driver.memory": "2g",
		"spark.jars": "local:///a.jar,https://h/b.jar,local:///app.jar", "spark.executor.instances": "3", "spark.app.name": "com.x.Main",
	}
	for k, v := range want {
		if in.Conf[k] != v {
			t.Errorf("%s = %q, want %q", k, in.Conf[k], v)
		}
	}
	for _, k := range []string{"spark.driver.host", "other.key"} {
		if _, ok := in.Conf[k]; ok {
			t.Errorf("%s kept", k)
		}
	}
	if in.MainClass != "com.x.Main" || in.Resource != "local:///app.jar" || strings.Join(in.AppArgs, " ") != "--not-an-option x" {
		t.Errorf("app %+v", in)
	}
	py, err := FromArgv([]string{"--master", "k8s://https://h", "--deploy-mode", "cluster", "s3a://b/dir/job.py"}, "3.5.9", nil)
	if err != nil {
		t.Fatal(err)
	}
	if py.Conf["spark.app.name"] != "job.py" || py.ResourceType != ResourcePython || py.MainClass != "org.apache.spark.deploy.PythonRunner" {
		t.Errorf("python %+v", py)
	}
	if _, ok := py.Conf["spark.jars"]; ok {
		t.Error("python apps get no spark.jars")
	}
}
