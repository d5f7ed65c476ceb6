package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/resolver/repo"
	"github.com/prebake/prebake/submit/k8s"
)

// journeyApp is the one app of the K8s journeys (issue 25), chosen by its
// first argument:
//
//	avro PATH        write three rows as Avro and read them back (spark-avro's
//	                 data source, not in Spark's distribution)
//	throw            main throws (no SparkContext)
//	sleep SECS CODE  sleep, then System.exit(CODE) (no SparkContext)
//	hang             start a non-daemon thread, then run a job whose task
//	                 fails: main throws, SparkSubmit stops the SparkContext,
//	                 and the thread keeps the driver JVM up
const journeyApp = `import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class JourneyApp {
  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "avro": {
        SparkSession s = SparkSession.builder().appName("prebake-avro-k8s").getOrCreate();
        s.range(0, 3, 1, 2).selectExpr("id", "concat('row-', id) AS name").write().format("avro").save(args[1]);
        List<Row> rows = s.read().format("avro").load(args[1]).orderBy("id").collectAsList();
        StringBuilder b = new StringBuilder();
        for (Row r : rows) {
          if (b.length() > 0) b.append(",");
          b.append(r.getString(1));
        }
        System.out.println("AVRO ROWS: " + b);
        s.stop();
        return;
      }
      case "throw":
        throw new IllegalStateException("journey: the app throws");
      case "sleep":
        Thread.sleep(Long.parseLong(args[1]) * 1000L);
        System.out.println("SLEPT " + args[1] + "s, exiting " + args[2]);
        System.exit(Integer.parseInt(args[2]));
        return;
      case "hang": {
        Thread t = new Thread(() -> {
          while (true) {
            try { Thread.sleep(60000L); } catch (InterruptedException e) { return; }
          }
        }, "journey-non-daemon");
        t.setDaemon(false);
        t.start();
        SparkSession s = SparkSession.builder().appName("prebake-hang-k8s").getOrCreate();
        s.range(0, 1, 1, 1).selectExpr("raise_error('journey: a task fails')").collectAsList();
        return;
      }
      default:
        throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }
}
`

// journeySetup is what the journeys share: the cluster, Maven Central as
// this machine reaches it, the Spark distribution that compiles the app, and
// the team's image (the Spark base plus JourneyApp's jar), built once.
type journeySetup struct {
	c         *k8scluster.Cluster
	central   string
	sparkHome string
	image     string
}

var journeyEnv testenv.Shared[*journeySetup]

func setupJourneys(t *testing.T) *journeySetup {
	t.Helper()
	testenv.RequireIT(t)
	c := k8scluster.Start(t)
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		testenv.Skip(t, "no route to Maven Central: "+err.Error())
	}
	sparkHome, _ := testenv.SparkHome(t, sparkVersion)
	return journeyEnv.Get(t, func() (*journeySetup, error) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		image := c.Registry + "/team/journey-app:1"
		err := c.JavaAppImage(ctx, sparkHome, sparkVersion, "JourneyApp", journeyApp, image)
		t.Logf("journeys: app image %s in %s", image, time.Since(start).Round(time.Millisecond))
		return &journeySetup{c: c, central: central, sparkHome: sparkHome, image: image}, err
	})
}

// journey is one scenario's namespace (with the driver's service account),
// a data directory every pod of the node mounts at /data, a token file for
// the submission, and a counting proxy in front of Maven Central on the
// node's address, where pods could reach it too.
type journey struct {
	*journeySetup
	ns, data, dir, tokenFile string
	maven                    *testenv.Proxy
	env                      []string
	home                     string
	started                  time.Time
}

func newJourney(t *testing.T, ns string) *journey {
	t.Helper()
	s := setupJourneys(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.c.SparkNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	j := &journey{journeySetup: s, ns: ns, dir: t.TempDir(), started: time.Now()}
	data, err := os.MkdirTemp("", "prebake-journey-data-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	if err := os.Chmod(data, 0o777); err != nil { // user 185 in the pods
		t.Fatal(err)
	}
	j.data = data
	j.tokenFile = filepath.Join(j.dir, "token")
	if err := os.WriteFile(j.tokenFile, []byte(s.c.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	j.maven = testenv.CountingProxy(t, s.central, testenv.ProxyListen(k8scluster.NodeIP+":0"))
	j.env, j.home = sparkEnv(t)
	j.env = append(j.env, "KUBECONFIG=", "DOCKER_CONFIG="+t.TempDir())
	t.Cleanup(func() {
		t.Logf("%s: %s", ns, time.Since(j.started).Round(100*time.Millisecond))
		if t.Failed() { // a driver left running would slow the next journeys down
			zero := int64(0)
			_ = s.c.Client.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		}
	})
	return j
}

// args is a `prebake submit -o json` of JourneyApp in cluster mode: prebake's
// flags, then spark-submit's (the node's conf, the submission token, the
// team's image, the /data hostPath, --packages spark-avro from the proxy),
// then conf and the app's arguments.
func (j *journey) args(flags, conf []string, appArgs ...string) []string {
	args := append([]string{"submit", "-o", "json", "--cache", filepath.Join(j.dir, "cache"),
		"--no-default-repositories", "--repositories", j.maven.URL, "--poll-interval", "2s"}, flags...)
	args = append(append(append(args, "--"), j.c.SparkConf(j.ns)...), "--name", j.ns, "--class", "JourneyApp",
		"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+j.tokenFile,
		"--conf", "spark.kubernetes.container.image="+j.image)
	for _, role := range []string{"driver", "executor"} {
		args = append(args, "--conf", "spark.kubernetes."+role+".volumes.hostPath.data.mount.path=/data",
			"--conf", "spark.kubernetes."+role+".volumes.hostPath.data.options.path="+j.data)
	}
	for _, kv := range conf {
		args = append(args, "--conf", kv)
	}
	args = append(args, "--packages", "org.apache.spark:spark-avro_2.12:"+sparkVersion, "local:///opt/spark/app/app.jar")
	return append(args, appArgs...)
}

// driver returns the namespace's one driver pod and its log.
func (j *journey) driver(t *testing.T) (*corev1.Pod, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := j.c.Client.CoreV1().Pods(j.ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=driver"})
	if err != nil || len(pods.Items) != 1 {
		n := 0
		if pods != nil {
			n = len(pods.Items)
		}
		t.Fatalf("%d driver pods in %s (%v), want 1", n, j.ns, err)
	}
	p := &pods.Items[0]
	b, _ := j.c.Client.CoreV1().Pods(j.ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	return p, string(b)
}

// waitPhase waits for the pod to reach phase (prebake ends on the driver
// container's end; the pod's phase may follow a few seconds later).
func (j *journey) waitPhase(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for pod.Status.Phase != phase {
		if time.Now().After(deadline) {
			t.Errorf("driver pod %s phase %s, want %s", pod.Name, pod.Status.Phase, phase)
			return
		}
		time.Sleep(time.Second)
		p, err := j.c.Client.CoreV1().Pods(j.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod = p
	}
}

// executors returns the namespace's executor pods.
func (j *journey) executors(t *testing.T) []corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := j.c.Client.CoreV1().Pods(j.ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=executor"})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// noMavenAfterResolve checks the proxy in front of Maven Central: prebake's
// resolve asked it (resolved > 0 when the cache was cold), and nothing
// else did: no request from a JVM (spark-submit's Ivy, the driver, the
// executors: their User-Agent is Java's or Ivy's, prebake's is its own: prebake/<version>), none
// from a pod's address, none after the driver pod was created.
func (j *journey) noMavenAfterResolve(t *testing.T, driver *corev1.Pod, coldCache bool) {
	t.Helper()
	reqs := j.maven.Requests()
	for _, r := range reqs {
		if !prebakesResolve(r, driver) {
			t.Errorf("a Maven request that is not prebake's resolve: %+v (driver pod created %s)", r, driver.CreationTimestamp)
		}
	}
	if coldCache && len(reqs) == 0 {
		t.Errorf("prebake's resolve made no request through the proxy %s", j.maven.URL)
	}
	t.Logf("Maven proxy: %d requests, all prebake's resolve", len(reqs))
}

// k8sDoc is prebake's -o json result of a K8s run: the backend's result
// and the keys the CLI adds.
type k8sDoc struct {
	k8s.Result
	ExitCode int    `json:"exitCode"`
	Source   string `json:"source"`
}

// parseResult reads prebake's -o json result.
func parseResult(t *testing.T, r result) k8sDoc {
	t.Helper()
	var res k8sDoc
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("result: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return res
}

func intp(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

// checkAvroJourney checks a succeeded Avro journey from outside: exit 0 with
// the driver's code 0, the driver ran image (a prefix), wrote and read
// Avro, resolved nothing, and execs executor pods ran.
func (j *journey) checkAvroJourney(t *testing.T, r result, imagePrefix string, execs int) (*corev1.Pod, string) {
	t.Helper()
	driver, log := j.driver(t)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s\ndriver log:\n%s", r.code, r.stdout, r.stderr, log)
	}
	res := parseResult(t, r)
	if res.Source != "driver" || intp(res.DriverExitCode) != "0" || res.Reason != "Completed" {
		t.Errorf("result source %q driverExitCode %s reason %q, want driver, 0, Completed:\n%s", res.Source, intp(res.DriverExitCode), res.Reason, r.stdout)
	}
	j.waitPhase(t, driver, corev1.PodSucceeded)
	if img := driver.Spec.Containers[0].Image; !strings.HasPrefix(img, imagePrefix) {
		t.Errorf("driver image %s, want %s…", img, imagePrefix)
	}
	if !strings.Contains(log, "AVRO ROWS: row-0,row-1,row-2") {
		t.Errorf("the driver did not write and read Avro:\n%s", log)
	}
	if strings.Contains(log, ":: resolving dependencies ::") || strings.Contains(log, "Ivy Default Cache") {
		t.Errorf("Spark resolved packages in the driver:\n%s", log)
	}
	if n := len(j.executors(t)); n != execs {
		t.Errorf("%d executor pods, want %d", n, execs)
	}
	noIvyWork(t, j.home, r.stderr)
	return driver, log
}

// TestK8sJourneyNative is scenario 2 of issue 25: the Avro journey with
// `--submitter native`: prebake, not spark-submit, creates the driver pod,
// its Service and ConfigMap; the driver runs the baked image, one executor
// pod writes and reads Avro, 0 Maven requests after prebake's resolve.
func TestK8sJourneyNative(t *testing.T) {
	t.Parallel() // the journeys overlap, two at a time (-parallel): the node's pods request 200m each
	j := newJourney(t, "journey-native")
	r := prebakeWithin(t, j.env, 8*time.Minute, j.args(
		[]string{"--image-target", j.c.Registry + "/spark-jobs", "--submitter", "native"},
		[]string{"spark.executor.instances=1"}, "avro", "/data/out.avro")...)
	driver, _ := j.checkAvroJourney(t, r, j.c.Registry+"/spark-jobs", 1)
	j.noMavenAfterResolve(t, driver, true)
	var managers []string
	for _, m := range driver.ManagedFields {
		managers = append(managers, m.Manager)
	}
	if len(managers) == 0 || strings.Contains(strings.Join(managers, ","), "fabric8") {
		t.Errorf("driver pod's field managers %v: want prebake's native client, not spark-submit's fabric8", managers)
	}
	if strings.Contains(r.stderr, "org.apache.spark.deploy") || strings.Contains(r.stderr, "LoggingPodStatusWatcherImpl") {
		t.Errorf("spark-submit ran:\n%s", r.stderr)
	}
	t.Logf("driver pod field managers: %v", managers)
}

// TestK8sJourneyDriverThrows is scenario 4a: an app whose main throws. The
// driver container exits 1 (an uncaught exception in main), and prebake
// passes it through (README exit codes: 1–63 are the driver's own) with
// "source": "driver".
func TestK8sJourneyDriverThrows(t *testing.T) {
	t.Parallel() // the journeys overlap, two at a time (-parallel)
	j := newJourney(t, "journey-throws")
	r := prebakeWithin(t, j.env, 6*time.Minute, j.args(
		[]string{"--image-target", j.c.Registry + "/spark-jobs", "--log-tail", "20"}, nil, "throw")...)
	driver, log := j.driver(t)
	res := parseResult(t, r)
	if r.code != 1 || res.ExitCode != 1 || intp(res.DriverExitCode) != "1" || res.Source != "driver" || res.Reason != "Error" {
		t.Errorf("exit %d, result exitCode %d driverExitCode %s source %q reason %q; want 1, 1, 1, driver, Error\nstdout:\n%s\nstderr:\n%s",
			r.code, res.ExitCode, intp(res.DriverExitCode), res.Source, res.Reason, r.stdout, r.stderr)
	}
	if !strings.Contains(log, "journey: the app throws") || !strings.Contains(strings.Join(res.LogTail, "\n"), "journey: the app throws") {
		t.Errorf("the exception is not in the driver log and the result's logTail:\n%s\nlogTail: %q", log, res.LogTail)
	}
	j.waitPhase(t, driver, corev1.PodFailed)
	j.noMavenAfterResolve(t, driver, true)
}

// running is a prebake process the test signals or changes things under.
type running struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
	start, end     time.Time
}

func startPrebake(t *testing.T, env []string, args ...string) *running {
	t.Helper()
	p := &running{done: make(chan struct{}), start: time.Now()}
	p.cmd = exec.Command(prebakeBin, args...)
	p.cmd.Env, p.cmd.Dir = env, t.TempDir()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); p.end = time.Now(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits up to limit for the process and returns its result.
func (p *running) wait(t *testing.T, limit time.Duration) result {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("prebake still ran after %s\nstderr:\n%s", limit, p.stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(p.err, &ee):
		code = ee.ExitCode()
	case p.err != nil:
		t.Fatalf("prebake: %v", p.err)
	}
	t.Logf("prebake submit: %s", time.Since(p.start).Round(100*time.Millisecond))
	return result{code, p.stdout.String(), p.stderr.String()}
}

// waitDriverRunning waits for the namespace's driver container to run
// (while p, the prebake that submitted it, runs).
func (j *journey) waitDriverRunning(t *testing.T, p *running, limit time.Duration) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("prebake ended before the driver ran: %v\nstdout:\n%s\nstderr:\n%s", p.err, p.stdout.String(), p.stderr.String())
		case <-time.After(time.Second):
		}
		pods, err := j.c.Client.CoreV1().Pods(j.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=driver"})
		if err != nil || len(pods.Items) != 1 {
			continue
		}
		for _, cs := range pods.Items[0].Status.ContainerStatuses {
			if cs.State.Running != nil {
				return &pods.Items[0]
			}
		}
	}
	t.Fatalf("no running driver in %s after %s", j.ns, limit)
	return nil
}

// TestK8sJourneySigterm is scenario 4b: SIGTERM to a running `prebake
// submit` (an Airflow task killed) deletes the driver pod and exits 80
// ("reason": "Cancelled", "source": "prebake").
func TestK8sJourneySigterm(t *testing.T) {
	t.Parallel() // the journeys overlap, two at a time (-parallel)
	j := newJourney(t, "journey-sigterm")
	p := startPrebake(t, j.env, j.args([]string{"--image-target", j.c.Registry + "/spark-jobs"}, nil, "sleep", "600", "0")...)
	driver := j.waitDriverRunning(t, p, 5*time.Minute)
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, 2*time.Minute)
	exited := p.end.Sub(sent)
	res := parseResult(t, r)
	if r.code != 80 || res.Reason != "Cancelled" || res.Source != "prebake" {
		t.Errorf("exit %d reason %q source %q, want 80, Cancelled, prebake\nstdout:\n%s\nstderr:\n%s", r.code, res.Reason, res.Source, r.stdout, r.stderr)
	}
	// The pod is deleted: gone, or going (its grace period runs on the
	// kubelet) with a deletion timestamp set by the time prebake exited.
	got, err := j.c.Client.CoreV1().Pods(j.ns).Get(context.Background(), driver.Name, metav1.GetOptions{})
	switch {
	case err == nil && got.DeletionTimestamp == nil:
		t.Errorf("driver pod %s not deleted after prebake exited", driver.Name)
	case err != nil && !strings.Contains(err.Error(), "not found"):
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err := j.c.Client.CoreV1().Pods(j.ns).Get(context.Background(), driver.Name, metav1.GetOptions{})
		if err != nil && strings.Contains(err.Error(), "not found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("driver pod %s still there 90s after prebake exited", driver.Name)
		}
		time.Sleep(time.Second)
	}
	t.Logf("SIGTERM → prebake exit %d in %s; driver pod gone %s after the signal", r.code, exited.Round(time.Millisecond), time.Since(sent).Round(100*time.Millisecond))
}

// TestK8sJourneyHungDriver is scenario 5, the first seed's failure: a job
// fails, main throws, SparkSubmit stops the SparkContext, and a non-daemon
// thread keeps the driver JVM up. prebake's hung-driver rule (the stop
// marker in the driver log, then the container still running --hung-grace
// later) ends the run within its grace and deletes the pod
// (--kill-hung-driver). The job failed, so the run must not succeed.
func TestK8sJourneyHungDriver(t *testing.T) {
	t.Parallel() // the journeys overlap, two at a time (-parallel)
	j := newJourney(t, "journey-hung")
	const grace = 20 * time.Second
	p := startPrebake(t, j.env, j.args([]string{"--image-target", j.c.Registry + "/spark-jobs", "--hung-grace", grace.String(), "--log-tail", "30"},
		[]string{"spark.executor.instances=1", "spark.task.maxFailures=1"}, "hang")...)
	driver := j.waitDriverRunning(t, p, 5*time.Minute)
	// The time the driver logged SparkContext's stop, from the kubelet's
	// timestamps, and the driver log, read until prebake ends (it deletes
	// the pod).
	var stopAt time.Time
	var log string
	for running := true; running; {
		select {
		case <-p.done:
			running = false
		case <-time.After(2 * time.Second):
		}
		b, err := j.c.Client.CoreV1().Pods(j.ns).GetLogs(driver.Name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(context.Background())
		if err != nil {
			continue
		}
		log = string(b)
		for _, l := range strings.Split(log, "\n") {
			if stopAt.IsZero() && (strings.Contains(l, "SparkContext is stopping with exitCode") || strings.Contains(l, "Successfully stopped SparkContext")) {
				ts, _, _ := strings.Cut(l, " ")
				stopAt, _ = time.Parse(time.RFC3339Nano, ts)
			}
		}
	}
	if stopAt.IsZero() {
		t.Fatalf("the driver never logged SparkContext's stop\nstdout:\n%s\nstderr:\n%s\ndriver log:\n%s", p.stdout.String(), p.stderr.String(), log)
	}
	r := p.wait(t, time.Minute)
	ended := p.end.Sub(stopAt)
	res := parseResult(t, r)
	t.Logf("hung driver: exit %d (reason %s, driverExitCode %s) %s after SparkContext's stop (grace %s): %s", r.code, res.Reason, intp(res.DriverExitCode), ended.Round(100*time.Millisecond), grace, res.Message)
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "SparkContext is stopping") || strings.Contains(l, "Successfully stopped SparkContext") || strings.HasPrefix(l[min(len(l), 31):], "Exception in thread") {
			t.Logf("driver| %s", l)
		}
	}
	if res.Reason != k8s.ReasonHung || r.code == 0 {
		t.Errorf("exit %d reason %q, want a failure with reason %s\nstdout:\n%s\nstderr:\n%s\ndriver log:\n%s", r.code, res.Reason, k8s.ReasonHung, r.stdout, r.stderr, log)
	}
	if r.code != 79 {
		t.Errorf("exit %d, want 79 (hung, no exit code of the app known)\nstdout:\n%s", r.code, r.stdout)
	}
	if ended < grace || ended > grace+30*time.Second {
		t.Errorf("prebake ended %s after SparkContext stopped, want within [%s, %s]", ended, grace, grace+30*time.Second)
	}
	if !strings.Contains(log, "journey: a task fails") {
		t.Errorf("the job did not fail as the app says:\n%s", log)
	}
	got, err := j.c.Client.CoreV1().Pods(j.ns).Get(context.Background(), driver.Name, metav1.GetOptions{})
	if err == nil && got.DeletionTimestamp == nil {
		t.Errorf("hung driver pod %s not deleted", driver.Name)
	}
}
