package spark

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pysparkApp is a PySpark job: the driver writes and reads Avro (spark-avro,
// from --packages) when asked, and a Python UDF runs on the executors and
// reports the interpreter there; it prints what it found and exits 0.
const pysparkApp = `import sys, platform
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf

spark = SparkSession.builder.appName("prebake-pyspark-journey").getOrCreate()
where = udf(lambda x: "%s-%d" % (platform.python_version(), x))
rows = spark.range(0, 4, 1, 2).select(where("id").alias("w")).collect()
print("PYSPARK DRIVER PYTHON " + platform.python_version())
print("PYSPARK UDF ROWS " + ",".join(sorted(r.w for r in rows)))
if len(sys.argv) > 1 and sys.argv[1] == "avro":
    out = sys.argv[2]
    spark.createDataFrame([("row-%d" % i,) for i in range(3)], ["v"]).write.mode("overwrite").format("avro").save(out)
    got = sorted(r.v for r in spark.read.format("avro").load(out).collect())
    print("PYSPARK AVRO ROWS " + ",".join(got))
spark.stop()
`

// TestK8sJourneyPySpark (issue 44, the first Must): the node's Spark image
// carries Debian's python3 as the official image does, so a PySpark job
// runs in cluster mode there, driver and executors in pods: once with the
// real spark-submit alone (no --packages), once through prebake with
// --packages spark-avro baked onto the team's image (the driver writes and
// reads Avro from Python; nothing resolves in the pods).
func TestK8sJourneyPySpark(t *testing.T) {
	t.Parallel()
	j := newJourney(t, "journey-pyspark")
	app := filepath.Join(j.data, "app.py")
	if err := os.WriteFile(app, []byte(pysparkApp), 0o644); err != nil {
		t.Fatal(err)
	}
	common := func(name string) []string {
		args := append(j.c.SparkConf(j.ns), "--name", name,
			"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+j.tokenFile,
			"--conf", "spark.kubernetes.driver.pod.name="+name+"-driver",
			"--conf", "spark.executor.instances=1")
		for _, role := range []string{"driver", "executor"} {
			args = append(args, "--conf", "spark.kubernetes."+role+".volumes.hostPath.data.mount.path=/data",
				"--conf", "spark.kubernetes."+role+".volumes.hostPath.data.options.path="+j.data)
		}
		return args
	}
	checkLog := func(t *testing.T, name string, want ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pod, err := j.c.Client.CoreV1().Pods(j.ns).Get(ctx, name+"-driver", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		j.waitPhase(t, pod, corev1.PodSucceeded)
		b, _ := j.c.Client.CoreV1().Pods(j.ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		log := string(b)
		for _, w := range append([]string{"PYSPARK DRIVER PYTHON 3.", "PYSPARK UDF ROWS 3."}, want...) {
			if !strings.Contains(log, w) {
				t.Errorf("%s: the driver's log lacks %q:\n%s", name, w, log)
			}
		}
		if strings.Contains(log, ":: resolving dependencies ::") {
			t.Errorf("%s: Spark resolved packages in the driver:\n%s", name, log)
		}
	}

	t.Run("spark-submit alone", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		args := append(common("pyspark-plain"), "--conf", "spark.kubernetes.container.image="+j.image, "local:///data/app.py")
		cmd := exec.CommandContext(ctx, filepath.Join(j.sparkHome, "bin", "spark-submit"), args...)
		cmd.Env = j.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("spark-submit: %v\n%s", err, out)
		}
		checkLog(t, "pyspark-plain")
	})

	t.Run("prebake with packages", func(t *testing.T) {
		args := append([]string{"submit", "-o", "json", "--cache", filepath.Join(j.dir, "cache"),
			"--no-default-repositories", "--repositories", j.maven.URL, "--poll-interval", "2s",
			"--image-target", j.c.Registry + "/spark-jobs", "--"}, common("pyspark-prebake")...)
		args = append(args, "--conf", "spark.kubernetes.container.image="+j.image,
			"--packages", "org.apache.spark:spark-avro_2.12:"+sparkVersion, "local:///data/app.py", "avro", "/data/py-out.avro")
		r := prebakeWithin(t, j.env, 8*time.Minute, args...)
		res := parseResult(t, r)
		if r.code != 0 || res.Source != "driver" {
			t.Fatalf("exit %d source %q, want 0 from the driver\nstdout:\n%s\nstderr:\n%s", r.code, res.Source, r.stdout, r.stderr)
		}
		checkLog(t, "pyspark-prebake", "PYSPARK AVRO ROWS row-0,row-1,row-2")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		driver, err := j.c.Client.CoreV1().Pods(j.ns).Get(ctx, "pyspark-prebake-driver", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := driver.Spec.Containers[0].Image; !strings.HasPrefix(img, j.c.Registry+"/spark-jobs") {
			t.Errorf("driver image %s, want the baked %s/spark-jobs…", img, j.c.Registry)
		}
		j.noMavenAfterResolve(t, driver, true)
	})
}
