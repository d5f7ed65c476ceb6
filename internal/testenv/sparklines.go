package testenv

import (
	"os"
	"slices"
	"testing"
)

// SparkLinePatches are, per Spark line, the oldest and newest pyspark patch
// the per-line native equivalence test submits with (issue 29). .ci/run
// installs only CISparkVersions (3.5.9, 4.0.5 and 4.3.0 of these); make
// native-lines installs them all (the Makefile's SPARK_LINE_PATCHES, kept
// in step by TestMakefileLinePatches) and sets PREBAKE_SPARK_LINES=all.
var SparkLinePatches = []string{"3.5.0", "3.5.9", "4.0.0", "4.0.5", "4.1.0", "4.1.4", "4.2.0", "4.2.1", "4.3.0"}

// CISparkVersions are the pyspark versions hack/infra.d/60-spark.sh
// installs by default, what .ci/run has: SparkVersions and the versions of
// the CI lines of SparkLines.
func CISparkVersions() []string {
	vs := slices.Clone(SparkVersions)
	for _, l := range SparkLines {
		if l.CI && !slices.Contains(vs, l.Version) {
			vs = append(vs, l.Version)
		}
	}
	return vs
}

// AllSparkLines reports whether PREBAKE_SPARK_LINES=all asks the per-line
// tests for every patch (make native-lines), not only what CI installs.
func AllSparkLines() bool { return os.Getenv("PREBAKE_SPARK_LINES") == "all" }

// SparkPatchHome is SparkHome for one of SparkLinePatches: a patch that CI
// installs (CISparkVersions), or any patch under PREBAKE_SPARK_LINES=all,
// must be there (SparkHome: a failure under CI when it is not); another
// patch runs when installed and is skipped, also under CI, when not.
func SparkPatchHome(t testing.TB, version string) (sparkHome, pythonPath string) {
	t.Helper()
	if _, _, ok := sparkInstalled(version); !ok && !AllSparkLines() && !slices.Contains(CISparkVersions(), version) {
		t.Skipf("pyspark %s not installed; .ci/run does not install it (make native-lines installs and runs every patch)", version)
	}
	return SparkHome(t, version)
}
