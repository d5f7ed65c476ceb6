package submit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
)

// TestSubmissionAccessors: what every backend reads from one loaded
// submission, with SparkSubmitArguments' precedence.
func TestSubmissionAccessors(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	if err := os.Mkdir(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, body string) {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(conf, "spark-defaults.conf"), "spark.a=defaults\nspark.b=defaults\nspark.c=defaults\nother.key=x\n")
	props := filepath.Join(dir, "job.conf")
	write(props, "spark.b=props \nspark.c=props\n")
	env := map[string]string{"SPARK_CONF_DIR": conf}
	environ := testenv.Environ(env)

	tests := []struct {
		name string
		args []string
		want map[string]any
	}{
		{"defaults under --conf",
			[]string{"--conf", "spark.c=argv", "-c", "not.spark=1", "--name", "n", "--class", "C", "app.jar", "a1"},
			map[string]any{"conf": map[string]string{"spark.a": "defaults", "spark.b": "defaults", "spark.c": "argv"},
				"name": "n", "class": "C", "primary": "app.jar", "appArgs": []string{"a1"}, "type": ResourceJava,
				"master": "", "supervise": false, "proxyUser": "", "propertiesFile": ""}},
		{"properties file replaces the defaults",
			[]string{"--properties-file", props, "--supervise", "--proxy-user", "u", "--master", "spark://m:7077", "job.py"},
			map[string]any{"conf": map[string]string{"spark.b": "props", "spark.c": "props"},
				"name": "job.py", "class": "", "primary": "job.py", "appArgs": []string{}, "type": ResourcePython,
				"master": "spark://m:7077", "supervise": true, "proxyUser": "u", "propertiesFile": props}},
		{"--load-spark-defaults: the file first, then the defaults",
			[]string{"--properties-file", props, "--load-spark-defaults", "--conf", "spark.app.name=fromconf", "--conf", "spark.master=k8s://h", "/x/app.R"},
			map[string]any{"conf": map[string]string{"spark.a": "defaults", "spark.b": "props", "spark.c": "props", "spark.app.name": "fromconf", "spark.master": "k8s://h"},
				"name": "fromconf", "class": "", "primary": "/x/app.R", "appArgs": []string{}, "type": ResourceR,
				"master": "k8s://h", "supervise": false, "proxyUser": "", "propertiesFile": props}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSubmission(tt.args, environ)
			if err != nil {
				t.Fatal(err)
			}
			primary, _ := s.Primary()
			master, _ := s.GivenMaster()
			got := map[string]any{"conf": s.SparkConf(), "name": s.Name(), "class": s.MainClass(), "primary": primary,
				"appArgs": s.AppArgs(), "type": s.PrimaryType(), "master": master, "supervise": s.Supervise(),
				"proxyUser": s.ProxyUser(), "propertiesFile": s.PropertiesFilePath()}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.args, s.Args()); d != "" {
				t.Errorf("Args (-want +got):\n%s", d)
			}
		})
	}
}

// TestSubmissionMaster: the master and deploy mode come from the flag, the
// conf, then $MASTER/$DEPLOY_MODE; GivenMaster says whether one was named.
func TestSubmissionMaster(t *testing.T) {
	for _, tt := range []struct {
		args             []string
		env              map[string]string
		master, mode     string
		given            bool
		wantGivenMaster  string
		wantMasterSource string
	}{
		{[]string{"app.jar"}, nil, "local[*]", "client", false, "", "default"},
		{[]string{"app.jar"}, map[string]string{"MASTER": "k8s://h", "DEPLOY_MODE": "cluster"}, "k8s://h", "cluster", true, "k8s://h", "env"},
		{[]string{"--conf", "spark.master=spark://m:7077", "app.jar"}, map[string]string{"MASTER": "k8s://h"}, "spark://m:7077", "client", true, "spark://m:7077", "conf"},
		{[]string{"--master", "yarn", "--deploy-mode", "client", "app.jar"}, map[string]string{"MASTER": "k8s://h", "DEPLOY_MODE": "cluster"}, "yarn", "client", true, "yarn", "flag"},
	} {
		s, err := LoadSubmission(tt.args, testenv.Environ(tt.env))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := s.GivenMaster()
		if s.Master() != tt.master || s.DeployMode() != tt.mode || ok != tt.given || g != tt.wantGivenMaster {
			t.Errorf("%q %v (%s): Master %q DeployMode %q GivenMaster %q %v", tt.args, tt.env, tt.wantMasterSource, s.Master(), s.DeployMode(), g, ok)
		}
	}
}

// TestSubmissionWithConf: the added --conf go after the user's options,
// before the primary resource (after a special --class, whose arguments
// are mixed, after the last option).
func TestSubmissionWithConf(t *testing.T) {
	for _, tt := range []struct{ args, want []string }{
		{[]string{"--master", "k8s://h", "--conf=spark.x=1", "-v", "app.jar", "--conf", "app-arg"},
			[]string{"--master", "k8s://h", "--conf=spark.x=1", "-v", "--conf", "k=v", "app.jar", "--conf", "app-arg"}},
		{[]string{"--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "a1", "--name", "t", "a2"},
			[]string{"--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "a1", "--name", "t", "--conf", "k=v", "a2"}},
	} {
		s, err := LoadSubmission(tt.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.want, s.WithConf("k", "v")); d != "" {
			t.Errorf("WithConf(%q) (-want +got):\n%s", tt.args, d)
		}
		if d := cmp.Diff(tt.args, s.Args()); d != "" {
			t.Errorf("the submission changed (-want +got):\n%s", d)
		}
	}
}

// TestSubmissionEnviron: the environment is the one given (a copy, never
// nil), Getenv reads it (the last entry of a name wins), and Reload keeps it.
func TestSubmissionEnviron(t *testing.T) {
	env := []string{"A=1", "B=x", "A=2", "NOEQUALS"}
	s, err := LoadSubmission([]string{"app.jar"}, env)
	if err != nil {
		t.Fatal(err)
	}
	env[0] = "A=changed"
	if got, want := s.Environ(), []string{"A=1", "B=x", "A=2", "NOEQUALS"}; !slices.Equal(got, want) {
		t.Errorf("Environ() = %q, want %q", got, want)
	}
	s.Environ()[0] = "A=changed"
	if got := s.Getenv("A"); got != "2" {
		t.Errorf("Getenv(A) = %q, want the last entry's 2", got)
	}
	if got := s.Getenv("NOEQUALS"); got != "" {
		t.Errorf("Getenv(NOEQUALS) = %q, want empty", got)
	}
	r, err := s.Reload([]string{"other.jar"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Environ(); !slices.Equal(got, s.Environ()) {
		t.Errorf("Reload: Environ() = %q, want %q", got, s.Environ())
	}
	empty, err := LoadSubmission([]string{"app.jar"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Environ(); got == nil || len(got) != 0 {
		t.Errorf("nil environment: Environ() = %#v, want empty and non-nil", got)
	}
}
