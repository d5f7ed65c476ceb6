package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// AirflowVersion, AirflowSparkProvider and AirflowK8sProvider are what hack/infra.d/70-airflow.sh
// installs (keep them in step).
const (
	AirflowVersion       = "3.3.2"
	AirflowSparkProvider = "6.3.4"
	AirflowK8sProvider   = "10.25.0"
)

// Airflow returns the bin directory of the virtualenv that
// hack/infra.d/70-airflow.sh installs (apache-airflow, its Spark and
// cncf.kubernetes providers, pinned). It is a JVM test's (NeedJVM). It skips (fails under CI) when it is not installed.
func Airflow(t testing.TB) string {
	t.Helper()
	NeedJVM(t)
	dir := filepath.Join(CacheDir(), "airflow-"+AirflowVersion+"-spark-"+AirflowSparkProvider+"-k8s-"+AirflowK8sProvider)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		Skip(t, "Airflow "+AirflowVersion+" not installed: run hack/infra.sh")
	}
	return filepath.Join(dir, "bin")
}
