package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/internal/redact"
)

// SparkSubmit runs the real spark-submit of one distribution as an oracle
// of what Spark's Ivy retrieves. Its JVM gets UserHome as user.home and
// HOME (so that Spark's local-m2-cache and Ivy's default directories are
// empty), ConfDir (empty) as SPARK_CONF_DIR and Ivy as spark.jars.ivy;
// DEFAULT_ARTIFACT_REPOSITORY points Spark's central resolver at Central.
type SparkSubmit struct {
	Home, PythonPath string // SPARK_HOME and PYTHONPATH
	Central          string // DEFAULT_ARTIFACT_REPOSITORY
	Ivy              string // spark.jars.ivy: the jars land in Ivy/jars
	UserHome         string // user.home and HOME
	ConfDir          string // SPARK_CONF_DIR
	// JVMOpts go to the SparkSubmit JVM besides user.home.
	JVMOpts string
}

// SparkJob is one spark-submit's resolution inputs and the (no-op)
// Python application it submits.
type SparkJob struct {
	Packages, Repositories, Excludes, IvySettings string
	App                                           string
}

// Run empties Ivy/jars and submits j's application in local mode with its
// packages, repositories, excludes and Ivy settings. It returns the run's
// output (stdout and stderr) and its error (nil when spark-submit exited
// 0); the jars it retrieved are Jars'.
func (s SparkSubmit) Run(ctx context.Context, j SparkJob) (string, error) {
	if err := os.RemoveAll(filepath.Join(s.Ivy, "jars")); err != nil {
		return "", err
	}
	args := []string{"--master", "local[1]", "--conf", "spark.jars.ivy=" + s.Ivy, "--conf", "spark.ui.enabled=false", "--packages", j.Packages}
	if j.Repositories != "" {
		args = append(args, "--repositories", j.Repositories)
	}
	if j.Excludes != "" {
		args = append(args, "--exclude-packages", j.Excludes)
	}
	if j.IvySettings != "" {
		args = append(args, "--conf", "spark.jars.ivySettings="+j.IvySettings)
	}
	args = append(args, j.App)
	cmd := exec.CommandContext(ctx, filepath.Join(s.Home, "bin", "spark-submit"), args...)
	cmd.Env = append(SparkEnv(),
		"SPARK_HOME="+s.Home, "PYTHONPATH="+s.PythonPath, "PYSPARK_PYTHON=python3",
		"HOME="+s.UserHome, "SPARK_CONF_DIR="+s.ConfDir,
		"SPARK_SUBMIT_OPTS="+strings.TrimSpace("-Duser.home="+s.UserHome+" "+s.JVMOpts),
		"DEFAULT_ARTIFACT_REPOSITORY="+s.Central)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Jars maps every jar the last Run retrieved (Ivy/jars) to its sha256.
func (s SparkSubmit) Jars() (map[string]string, error) {
	return HashDir(filepath.Join(s.Ivy, "jars"))
}

// SparkEnv is the environment without what would change Spark's or
// Python's behaviour under a test, with SPARK_LOCAL_IP=127.0.0.1.
func SparkEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "SPARK_HOME", "PYTHONPATH", "HOME", "SPARK_CONF_DIR", "SPARK_SUBMIT_OPTS", "DEFAULT_ARTIFACT_REPOSITORY",
			"PYSPARK_SUBMIT_ARGS", "SPARK_LOCAL_IP", "_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "SPARK_LOCAL_IP=127.0.0.1")
}

// HashDir maps every regular file of dir to its sha256.
func HashDir(dir string) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		sum, _, err := digest.File(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = sum
	}
	return out, nil
}

// LastLines is the last n lines of s, redacted.
func LastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return redact.String(strings.Join(l, "\n"))
}
