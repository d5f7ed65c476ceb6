package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// SparkLinePatches are, per Spark line, the oldest and newest pyspark patch
// the equivalence and standalone tests use (issue 29); the lead's infra
// installs them next to SparkVersions under CacheDir()/pyspark-<version>.
var SparkLinePatches = []string{"3.5.0", "3.5.9", "4.0.0", "4.0.5", "4.1.0", "4.1.4", "4.2.0", "4.2.1", "4.3.0"}

// SparkLineHome is SparkHome for any installed pyspark version (not only
// SparkVersions): its SPARK_HOME and PYTHONPATH directory. It skips (fails
// under CI) when that version is not installed.
func SparkLineHome(t testing.TB, version string) (sparkHome, pythonPath string) {
	t.Helper()
	home, dir, ok := SparkLineInstalled(version)
	if !ok {
		Skip(t, "pyspark "+version+" not installed under "+CacheDir())
	}
	return home, dir
}

// SparkLineInstalled reports whether pyspark version is installed (its
// bin/spark-submit exists), with its SPARK_HOME and PYTHONPATH directory.
func SparkLineInstalled(version string) (sparkHome, pythonPath string, ok bool) {
	dir := filepath.Join(CacheDir(), "pyspark-"+version)
	home := filepath.Join(dir, "pyspark")
	if _, err := os.Stat(filepath.Join(home, "bin", "spark-submit")); err != nil {
		return "", "", false
	}
	return home, dir, true
}
