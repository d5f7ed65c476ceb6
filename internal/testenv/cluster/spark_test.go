package cluster

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

	"github.com/prebake/prebake/internal/testenv"
)

// sumApp sums 0..999 over 4 partitions once every executor has registered,
// and prints the sum and the number of executors.
const sumApp = `import org.apache.spark.sql.SparkSession;

public class SumApp {
  public static void main(String[] args) {
    SparkSession s = SparkSession.builder().appName("prebake-node").getOrCreate();
    long sum = s.range(0, 1000, 1, 4).selectExpr("sum(id)").first().getLong(0);
    int executors = s.sparkContext().getExecutorMemoryStatus().size() - 1;
    System.out.println("SUM " + sum + " EXECUTORS " + executors);
    s.stop();
  }
}
`

// TestSparkClusterMode: the real spark-submit of pyspark, in cluster mode
// against the node, with the Spark base image plus a javac-compiled app:
// the driver pod runs the image's entry point (driver role), two executor
// pods (executor role) register with it through the driver's headless
// Service name (the cluster DNS), the job's sum is right, spark-submit
// exits 0 and the driver pod Succeeded.
func TestSparkClusterMode(t *testing.T) {
	c := Start(t)
	v := testenv.SparkVersions[0]
	home, _ := testenv.SparkHome(t, v)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	image := c.Registry + "/spark-sum-app:" + v
	if err := c.JavaAppImage(ctx, home, v, "SumApp", sumApp, image); err != nil {
		t.Fatal(err)
	}
	ns := "spark-cluster-mode"
	if err := c.SparkNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	args := append(c.SparkConf(ns), "--name", "sum-app", "--class", "SumApp",
		"--conf", "spark.kubernetes.container.image="+image,
		"--conf", "spark.kubernetes.authenticate.submission.oauthToken="+c.Token,
		"--conf", "spark.kubernetes.driver.pod.name=sum-app-driver",
		"local:///opt/spark/app/app.jar")
	cmd := exec.CommandContext(ctx, filepath.Join(home, "bin", "spark-submit"), args...)
	cmd.Env = append(os.Environ(), "SPARK_HOME="+home)
	out, err := cmd.CombinedOutput()
	t.Logf("spark-submit took %s", time.Since(start).Round(time.Millisecond))
	driverLog := ""
	if b, lerr := c.Client.CoreV1().Pods(ns).GetLogs("sum-app-driver", &corev1.PodLogOptions{}).DoRaw(ctx); lerr == nil {
		driverLog = string(b)
	}
	if err != nil {
		t.Fatalf("spark-submit: %v\n%s\ndriver log:\n%s", err, tailString(string(out), 40), tailString(driverLog, 60))
	}
	if !strings.Contains(driverLog, "SUM 499500 EXECUTORS 2") {
		t.Errorf("driver log lacks the job's line:\n%s", tailString(driverLog, 60))
	}
	drv, err := c.Client.CoreV1().Pods(ns).Get(ctx, "sum-app-driver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if drv.Status.Phase != corev1.PodSucceeded {
		t.Errorf("driver pod %s, want Succeeded", drv.Status.Phase)
	}
	execs, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=executor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(execs.Items) != 2 {
		t.Errorf("%d executor pods, want 2", len(execs.Items))
	}
	for _, p := range execs.Items {
		if p.Spec.NodeName != NodeName || p.Spec.Containers[0].Image != image {
			t.Errorf("executor %s on %q from %s", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image)
		}
	}
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
