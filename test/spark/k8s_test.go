package spark

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/resolver"
)

// avroJavaApp writes three rows as Avro and reads them back: the "avro"
// data source is spark-avro's, not in Spark's distribution.
const avroJavaApp = `import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class AvroApp {
  public static void main(String[] args) {
    SparkSession s = SparkSession.builder().appName("prebake-avro-k8s").getOrCreate();
    s.range(0, 3, 1, 2).selectExpr("id", "concat('row-', id) AS name").write().format("avro").save(args[0]);
    List<Row> rows = s.read().format("avro").load(args[0]).orderBy("id").collectAsList();
    StringBuilder b = new StringBuilder();
    for (Row r : rows) {
      if (b.length() > 0) b.append(",");
      b.append(r.getString(1));
    }
    System.out.println("AVRO ROWS: " + b);
    s.stop();
  }
}
`

// TestK8sClusterAvroFromCentral is the first journey of issue 25 on the
// real node: `prebake submit --image-target <local registry> -- --master
// k8s://… --deploy-mode cluster --packages spark-avro …` resolves spark-avro
// from Maven Central (as this machine reaches it), bakes it onto the Spark
// base image, and the real spark-submit runs the job: the driver pod runs
// the baked image, two executor pods write and read Avro (a hostPath shared
// by the pods of the one node), prebake exits 0, and Spark resolved nothing.
func TestK8sClusterAvroFromCentral(t *testing.T) {
	testenv.RequireIT(t)
	c := k8scluster.Start(t)
	env, home := sparkEnv(t)
	central, err := resolver.MavenCentralURL("", "")
	if err != nil {
		testenv.Skip(t, "no route to Maven Central: "+err.Error())
	}
	sparkHome, _ := testenv.SparkHome(t, sparkVersion)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	// The team's image: the Spark base and the app (what bake image appends to).
	base := c.Registry + "/team/avro-app:1"
	if err := c.JavaAppImage(ctx, sparkHome, sparkVersion, "AvroApp", avroJavaApp, base); err != nil {
		t.Fatal(err)
	}
	ns := "avro-journey"
	if err := c.SparkNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	shared, err := os.MkdirTemp("", "prebake-avro-data-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777); err != nil { // user 185 in the pods
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(c.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"submit", "-o", "json", "--image-target", c.Registry + "/spark-jobs",
		"--cache", filepath.Join(dir, "cache"), "--no-default-repositories", "--repositories", central, "--",
	}
	args = append(append(args, c.SparkConf(ns)...), "--name", "avro-k8s", "--class", "AvroApp",
		"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+tokenFile,
		"--conf", "spark.kubernetes.container.image="+base)
	for _, role := range []string{"driver", "executor"} {
		args = append(args, "--conf", "spark.kubernetes."+role+".volumes.hostPath.data.mount.path=/data",
			"--conf", "spark.kubernetes."+role+".volumes.hostPath.data.options.path="+shared)
	}
	args = append(args, "--packages", "org.apache.spark:spark-avro_2.12:"+sparkVersion, "local:///opt/spark/app/app.jar", "/data/out.avro")
	env = append(env, "KUBECONFIG=", "DOCKER_CONFIG="+t.TempDir())
	r := prebakeWithin(t, env, 9*time.Minute, args...)
	var driverLog string
	pods, _ := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=driver"})
	var driver *corev1.Pod
	if pods != nil && len(pods.Items) == 1 {
		driver = &pods.Items[0]
		if b, err := c.Client.CoreV1().Pods(ns).GetLogs(driver.Name, &corev1.PodLogOptions{}).DoRaw(ctx); err == nil {
			driverLog = string(b)
		}
	}
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s\ndriver log:\n%s", r.code, r.stdout, r.stderr, driverLog)
	}
	var res struct {
		Backend, Source, Reason string
		DriverExitCode          *int
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Source != "driver" || res.DriverExitCode == nil || *res.DriverExitCode != 0 {
		t.Errorf("result %+v (%v):\n%s", res, err, r.stdout)
	}
	if driver == nil {
		t.Fatalf("no single driver pod in %s", ns)
	}
	if img := driver.Spec.Containers[0].Image; !strings.HasPrefix(img, c.Registry+"/spark-jobs") {
		t.Errorf("driver image %s, want the baked image in %s/spark-jobs", img, c.Registry)
	}
	if !strings.Contains(driverLog, "AVRO ROWS: row-0,row-1,row-2") {
		t.Errorf("the driver did not write and read Avro:\n%s", driverLog)
	}
	if strings.Contains(driverLog, ":: resolving dependencies ::") || strings.Contains(driverLog, "Ivy Default Cache") {
		t.Errorf("Spark resolved packages in the driver:\n%s", driverLog)
	}
	execs, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=executor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(execs.Items) != 2 {
		t.Errorf("%d executor pods, want 2", len(execs.Items))
	}
	noIvyWork(t, home, r.stderr)
}
