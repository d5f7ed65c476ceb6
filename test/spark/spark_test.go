// Package spark runs what prebake rewrites on the real Apache Spark (the
// pyspark distribution that hack/infra.d/60-spark.sh installs): local mode
// through the real spark-submit, a real standalone master (REST server on)
// and worker on 127.0.0.1, and Airflow's SparkSubmitOperator in
// examples/. It is also the home of the journeys on the real node
// (internal/testenv/cluster: k8s_*, Airflow's SparkSubmitOperator and
// KubernetesPodOperator, the API server probe), so that one binary holds
// the node. The prebake binary is built once per test binary, and one
// master and worker serve every standalone test.
package spark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
)

// sparkVersion is the distribution the tests run (Scala 2.12 packages).
const sparkVersion = "3.5.9"

var (
	prebakeBin string // built by TestMain under PREBAKE_IT=1
	repoRoot   string
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		repoRoot = root
		if testenv.Integration() {
			if prebakeBin, err = testenv.BuildPrebake(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer testenv.RemovePrebake()
			defer testenv.RunAtExit() // the servers the binary launched (no bed)
			defer k8scluster.Stop()
			defer removeAirflow()
		}
		return m.Run()
	}())
}

// sparkEnv is the environment of a prebake or Spark process: the real
// Spark, a fresh HOME (so that any Ivy directory Spark made would show),
// and none of the machine's prebake settings.
func sparkEnv(t *testing.T) (env []string, home string) {
	t.Helper()
	return sparkEnvFor(t, sparkVersion)
}

// sparkEnvFor is sparkEnv for one of testenv.SparkVersions.
func sparkEnvFor(t *testing.T, version string) (env []string, home string) {
	t.Helper()
	sparkHome, pyPath := testenv.SparkHome(t, version)
	home = filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "HOME="+home, "SPARK_HOME="+sparkHome, "PYTHONPATH="+pyPath,
		"SPARK_LOCAL_IP=127.0.0.1", "SPARK_CONF_DIR="+t.TempDir(),
		"PREBAKE_STORE=", "PREBAKE_IMAGE_TARGET=", "PREBAKE_CONFIG=", "PREBAKE_CACHE="+filepath.Join(home, "prebake-cache"))
	return env, home
}

// result is one prebake run.
type result struct {
	code           int
	stdout, stderr string
}

// prebake runs the binary with env and args and waits for it.
func prebake(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return prebakeWithin(t, env, 5*time.Minute, args...)
}

// prebakeWithin is prebake with its own time limit.
func prebakeWithin(t *testing.T, env []string, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, prebakeBin, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("prebake %s: %s", strings.Join(args[:min(len(args), 2)], " "), time.Since(start).Round(100*time.Millisecond))
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("prebake: %v", err)
	}
	return result{code, stdout.String(), stderr.String()}
}

// noIvyWork checks that Spark resolved nothing at run time: no Ivy
// directory under HOME, no resolution in its log.
func noIvyWork(t *testing.T, home, log string) {
	t.Helper()
	for _, d := range []string{".ivy2", ".ivy2.5.2"} {
		if _, err := os.Stat(filepath.Join(home, d)); err == nil {
			t.Errorf("Spark created ~/%s: it resolved packages at run time", d)
		}
	}
	for _, s := range []string{":: resolving dependencies", "Ivy Default Cache set to", ":: loading settings", "artifacts copied"} {
		if strings.Contains(log, s) {
			t.Errorf("Spark's log shows Ivy work (%q)", s)
		}
	}
}

// demoRepo is testdata/spark-demo/repo as a repository URL: the real one-class
// package dev.prebake.demo:greeting:1.0.
func demoRepo() string {
	return "file://" + filepath.Join(repoRoot, "testdata", "spark-demo", "repo") + "/"
}
