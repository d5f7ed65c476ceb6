package spark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/testenv"
)

// mainJava is the tiny cluster-mode app: it loads the class named by its
// first argument (one only a package provides), then finishes, throws,
// sleeps, or starts a SparkContext and throws, as its second argument says. It is compiled with javac against
// Spark's jars.
const mainJava = `import org.apache.spark.SparkConf;

public class Main {
    public static void main(String[] args) throws Exception {
        SparkConf conf = new SparkConf();
        Class<?> c = Class.forName(args[0]);
        System.out.println("LOADED " + c.getName() + " in " + conf.get("spark.app.name", "?"));
        String mode = args.length > 1 ? args[1] : "";
        if (mode.equals("throw")) {
            throw new IllegalStateException("asked to fail");
        }
        if (mode.equals("sleep")) {
            Thread.sleep(10 * 60 * 1000L);
        }
        if (mode.equals("context-throw")) {
            // A real job: a SparkContext starts, then the job fails.
            org.apache.spark.SparkContext sc = new org.apache.spark.SparkContext(conf);
            try {
                throw new IllegalStateException("asked to fail after SparkContext started");
            } finally {
                sc.stop();
            }
        }
    }
}
`

// standaloneCluster is one real master (REST server on) and one real
// worker on 127.0.0.1, shared by the tests of this binary.
type standaloneCluster struct {
	home     string // SPARK_HOME
	dir      string
	env      []string
	restPort int
	webPort  int
	workDir  string
	appJar   string
	procs    []*exec.Cmd // worker after master: stopped in reverse
	// restByDefault leaves spark.master.rest.enabled unset: Spark 4.1+
	// turns the REST server on by default (SPARK-51165).
	restByDefault bool
}

var sharedStandalone testenv.Shared[*standaloneCluster]

// standalone starts the shared cluster on first use.
func standalone(t *testing.T) *standaloneCluster {
	t.Helper()
	sparkHome, _ := testenv.SparkHome(t, sparkVersion)
	return sharedStandalone.Get(t, func() (*standaloneCluster, error) {
		c, err := startStandalone(sparkHome)
		if err != nil {
			err = fmt.Errorf("standalone cluster: %w", err)
		}
		return c, err
	})
}

// stopStandalone stops the shared cluster, a half-started one included.
func stopStandalone() {
	sharedStandalone.Close(func(c *standaloneCluster) {
		if c == nil {
			return
		}
		for i := len(c.procs) - 1; i >= 0; i-- {
			stopProc(c.procs[i])
		}
		os.RemoveAll(c.dir)
	})
}

// stopProc sends SIGTERM (Spark's shutdown hooks stop the drivers a worker
// runs), then SIGKILL after 20s.
func stopProc(p *exec.Cmd) { testenv.StopProcess(p, 20*time.Second, nil) }

func startStandalone(sparkHome string) (*standaloneCluster, error) {
	return startStandaloneREST(sparkHome, false)
}

// startStandaloneREST is startStandalone; restByDefault leaves
// spark.master.rest.enabled unset (Spark 4.1+ lines).
func startStandaloneREST(sparkHome string, restByDefault bool) (*standaloneCluster, error) {
	dir, err := os.MkdirTemp("", "prebake-standalone-")
	if err != nil {
		return nil, err
	}
	c := &standaloneCluster{home: sparkHome, dir: dir, workDir: filepath.Join(dir, "work"), restByDefault: restByDefault}
	c.env = append(os.Environ(), "SPARK_HOME="+sparkHome, "SPARK_LOCAL_IP=127.0.0.1", "HOME="+dir,
		"SPARK_CONF_DIR="+filepath.Join(dir, "conf"), "SPARK_NO_DAEMONIZE=1")
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		return nil, err
	}
	if c.appJar, err = buildApp(sparkHome, dir); err != nil {
		return nil, err
	}
	ports, err := testenv.FreePorts(4)
	if err != nil {
		return nil, err
	}
	rpcPort, workerWeb := ports[0], ports[3]
	c.restPort, c.webPort = ports[1], ports[2]
	master, err := c.startMaster("master", rpcPort, c.restPort, c.webPort)
	if err != nil {
		return c, err
	}
	c.procs = append(c.procs, master)
	worker := exec.Command(filepath.Join(sparkHome, "bin", "spark-class"), "org.apache.spark.deploy.worker.Worker",
		"--host", "127.0.0.1", "--webui-port", strconv.Itoa(workerWeb), "--cores", "2", "--memory", "1536m",
		"--work-dir", c.workDir, fmt.Sprintf("spark://127.0.0.1:%d", rpcPort))
	if err := c.start(worker, "worker"); err != nil {
		return c, err
	}
	c.procs = append(c.procs, worker)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var st struct {
			AliveWorkers int `json:"aliveworkers"`
		}
		if err := getJSON(fmt.Sprintf("http://127.0.0.1:%d/json/", c.webPort), &st); err == nil && st.AliveWorkers > 0 {
			return c, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "worker.log"))
			return c, fmt.Errorf("no worker registered after 2m; worker log:\n%s", log)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// startMaster starts a master with its REST server on restPort and waits
// until that port answers.
func (c *standaloneCluster) startMaster(name string, rpcPort, restPort, webPort int) (*exec.Cmd, error) {
	props := filepath.Join(c.dir, name+".properties")
	conf := fmt.Sprintf("spark.master.rest.port=%d\n", restPort)
	if !c.restByDefault {
		conf = "spark.master.rest.enabled=true\n" + conf
	}
	if err := os.WriteFile(props, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	m := exec.Command(filepath.Join(c.home, "bin", "spark-class"), "org.apache.spark.deploy.master.Master",
		"--host", "127.0.0.1", "--port", strconv.Itoa(rpcPort), "--webui-port", strconv.Itoa(webPort), "--properties-file", props)
	if err := c.start(m, name); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", restPort), time.Second)
		if err == nil {
			conn.Close()
			return m, nil
		}
		if time.Now().After(deadline) {
			stopProc(m)
			log, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
			return nil, fmt.Errorf("%s: REST port %d not up after 2m; log:\n%s", name, restPort, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// start runs cmd with the cluster's environment and its output in name.log.
func (c *standaloneCluster) start(cmd *exec.Cmd, name string) error {
	log, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = c.env, log, log, c.dir
	return cmd.Start()
}

// buildApp compiles mainJava against Spark's jars into app.jar.
func buildApp(sparkHome, dir string) (string, error) {
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "Main.java"), []byte(mainJava), 0o644); err != nil {
		return "", err
	}
	classes := filepath.Join(dir, "classes")
	jar := filepath.Join(dir, "app.jar")
	// Spark 4's jars are Java 17 class files.
	release := "8"
	if m, _ := filepath.Glob(filepath.Join(sparkHome, "jars", "spark-core_*-4.*.jar")); len(m) > 0 {
		release = "17"
	}
	for _, args := range [][]string{
		{"javac", "--release", release, "-cp", filepath.Join(sparkHome, "jars", "*"), "-d", classes, filepath.Join(src, "Main.java")},
		{"jar", "--create", "--file", jar, "-C", classes, "."},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %v\n%s", args[0], err, out)
		}
	}
	return jar, nil
}

func getJSON(url string, v any) error {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// restResult is prebake's -o json for spark://.
type restResult struct {
	SubmissionID string `json:"submissionId"`
	State        string `json:"state"`
	ExitCode     int    `json:"exitCode"`
	Source       string `json:"source"`
}

// submitArgs is `prebake submit` of the tiny app in cluster mode through
// master, with the package from the demo repository stored in a file://
// store.
func (c *standaloneCluster) submitArgs(t *testing.T, master string, appArgs ...string) []string {
	store := "file://" + filepath.Join(t.TempDir(), "store")
	args := []string{"submit", "-o", "json", "--store", store, "--no-default-repositories", "--repositories", demoRepo(),
		"--poll-interval", "300ms", "--",
		"--master", master, "--deploy-mode", "cluster", "--class", "Main",
		"--conf", "spark.driver.memory=512m", "--packages", "dev.prebake.demo:greeting:1.0", c.appJar}
	return append(args, appArgs...)
}

// submitGreeting submits the demo's Greeting through the REST path of
// master: it must finish, its driver having loaded the packaged class.
func (c *standaloneCluster) submitGreeting(t *testing.T, env []string, master string) result {
	t.Helper()
	r := prebake(t, env, c.submitArgs(t, master, "dev.prebake.demo.Greeting")...)
	res := parseRest(t, r)
	if r.code != 0 || res.State != "FINISHED" || res.Source != "driver" {
		t.Fatalf("exit %d, result %+v, want 0 and FINISHED\nstderr:\n%s", r.code, res, r.stderr)
	}
	if out := c.driverStdout(res.SubmissionID); !strings.Contains(out, "LOADED dev.prebake.demo.Greeting") {
		t.Errorf("the driver did not load the packaged class; its stdout:\n%s", out)
	}
	return r
}

func parseRest(t *testing.T, r result) restResult {
	t.Helper()
	var res restResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("-o json: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return res
}

// driverStdout is what the driver printed, from the worker's work dir.
func (c *standaloneCluster) driverStdout(id string) string {
	b, _ := os.ReadFile(filepath.Join(c.workDir, id, "stdout"))
	return string(b)
}

// TestStandaloneREST submits through the real master's REST server: the
// driver loads the packaged class from the store's jar and FINISHED gives
// 0; an app that throws gives FAILED and 80; and with a dead first master
// (HA), the second takes the submission.
func TestStandaloneREST(t *testing.T) {
	testenv.RequireIT(t)
	env, _ := sparkEnv(t)
	c := standalone(t)
	master := fmt.Sprintf("spark://127.0.0.1:%d", c.restPort)

	t.Run("FINISHED", func(t *testing.T) {
		r := c.submitGreeting(t, env, master)
		if strings.Contains(r.stderr, "packages") && strings.Contains(r.stderr, "spark.jars.packages=") {
			t.Errorf("packages reached the master:\n%s", r.stderr)
		}
	})
	t.Run("throws", func(t *testing.T) {
		r := prebake(t, env, c.submitArgs(t, master, "dev.prebake.demo.Greeting", "throw")...)
		res := parseRest(t, r)
		if r.code != exitcode.DriverFailed || res.State != "FAILED" {
			t.Fatalf("exit %d, result %+v, want 80 and FAILED\nstderr:\n%s", r.code, res, r.stderr)
		}
	})
	// Review 3, finding 7: a failure says where the driver's log is and
	// shows its last lines, fetched through the master's and the worker's
	// UIs, for an app that starts a SparkContext.
	t.Run("SparkContext then throws: the log tail", func(t *testing.T) {
		args := c.submitArgs(t, master, "dev.prebake.demo.Greeting", "context-throw")
		args = append([]string{args[0], "--master-ui", fmt.Sprintf("http://127.0.0.1:%d", c.webPort)}, args[1:]...)
		r := prebake(t, env, args...)
		var res struct {
			restResult
			Message string   `json:"message"`
			LogTail []string `json:"logTail"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("-o json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		if r.code != exitcode.DriverFailed || res.State != "FAILED" {
			t.Fatalf("exit %d, result %+v, want 80 and FAILED\nstderr:\n%s", r.code, res, r.stderr)
		}
		if !strings.Contains(res.Message, "work/"+res.SubmissionID+"/stderr") || !strings.Contains(res.Message, "/logPage/?driverId="+res.SubmissionID) {
			t.Errorf("the message does not say where the log is: %s", res.Message)
		}
		stderrFile, _ := os.ReadFile(filepath.Join(c.workDir, res.SubmissionID, "stderr"))
		tail := strings.Join(res.LogTail, "\n")
		t.Logf("message: %s\nlast lines: %q", res.Message, res.LogTail[max(0, len(res.LogTail)-3):])
		if len(res.LogTail) == 0 || !strings.Contains(tail, "Exception") || !strings.Contains(string(stderrFile), res.LogTail[len(res.LogTail)-1]) {
			t.Errorf("log tail %q; the worker's stderr ends:\n%s", res.LogTail, stderrFile[max(0, len(stderrFile)-2000):])
		}
		if !strings.Contains(tail, "SparkContext") {
			t.Errorf("the app did not start a SparkContext; tail:\n%s", tail)
		}
	})
	t.Run("HA: the first master is dead", func(t *testing.T) {
		ports, err := testenv.FreePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		// A real master that was running on that port and is now gone.
		dead, err := c.startMaster("dead-master", ports[0], ports[1], ports[2])
		if err != nil {
			t.Fatal(err)
		}
		stopProc(dead)
		ha := fmt.Sprintf("spark://127.0.0.1:%d,127.0.0.1:%d", ports[1], c.restPort)
		r := prebake(t, env, c.submitArgs(t, ha, "dev.prebake.demo.Greeting")...)
		res := parseRest(t, r)
		if r.code != 0 || res.State != "FINISHED" {
			t.Fatalf("exit %d, result %+v, want 0 and FINISHED through the second master\nstderr:\n%s", r.code, res, r.stderr)
		}
	})
}

var runningRE = regexp.MustCompile(`prebake: driver (\S+) is RUNNING`)

// TestStandaloneSIGTERMKills sends SIGTERM to prebake while the driver runs:
// prebake kills the submission, and the real master reports KILLED.
func TestStandaloneSIGTERMKills(t *testing.T) {
	testenv.RequireIT(t)
	env, _ := sparkEnv(t)
	c := standalone(t)
	master := fmt.Sprintf("spark://127.0.0.1:%d", c.restPort)
	cmd := exec.Command(prebakeBin, c.submitArgs(t, master, "dev.prebake.demo.Greeting", "sleep")...)
	cmd.Env = env
	var stdout bytes.Buffer
	var stderr testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM once the driver runs the app (it printed LOADED in the
	// worker's work dir), not merely once it was accepted.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		id := ""
		if m := runningRE.FindStringSubmatch(stderr.String()); m != nil {
			id = m[1]
		}
		if id != "" && strings.Contains(c.driverStdout(id), "LOADED dev.prebake.demo.Greeting") {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the driver never ran the app:\n%s", stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitcode.DriverFailed {
		t.Errorf("after SIGTERM: %v, want exit 80\n%s", err, stderr.String())
	}
	res := parseRest(t, result{stdout: stdout.String(), stderr: stderr.String()})
	if res.SubmissionID == "" {
		t.Fatalf("no submission ID in %s", stdout.String())
	}
	// Ask the master itself.
	var st struct {
		DriverState string `json:"driverState"`
	}
	deadline = time.Now().Add(time.Minute)
	for {
		err := getJSON(fmt.Sprintf("http://127.0.0.1:%d/v1/submissions/status/%s", c.restPort, res.SubmissionID), &st)
		if err == nil && st.DriverState == "KILLED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the master reports %q (%v), want KILLED\nprebake:\n%s", st.DriverState, err, stderr.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// standaloneLine is the newest Spark line whose master the REST path is
// checked against with the REST server on by default (4.1+).
const standaloneLine = "4.3.0"

// TestStandaloneRESTLine4: the REST path against a real Spark 4.3 master
// (and worker) whose properties leave spark.master.rest.enabled unset:
// 4.1+ start the REST server by default. The driver loads the packaged
// class from the store's jar and FINISHED gives 0; a throwing app gives
// FAILED and 80.
func TestStandaloneRESTLine4(t *testing.T) {
	testenv.RequireIT(t)
	t.Parallel() // its own master and worker: overlaps the other parallel tests
	env, _ := sparkEnv(t)
	home, _ := testenv.SparkHome(t, standaloneLine)
	c, err := startStandaloneREST(home, true)
	t.Cleanup(func() {
		if c == nil {
			return
		}
		for i := len(c.procs) - 1; i >= 0; i-- {
			stopProc(c.procs[i])
		}
		os.RemoveAll(c.dir)
	})
	if err != nil {
		t.Fatalf("standalone %s cluster: %v", standaloneLine, err)
	}
	props, _ := os.ReadFile(filepath.Join(c.dir, "master.properties"))
	if strings.Contains(string(props), "spark.master.rest.enabled") {
		t.Fatalf("the master's properties set spark.master.rest.enabled:\n%s", props)
	}
	master := fmt.Sprintf("spark://127.0.0.1:%d", c.restPort)
	c.submitGreeting(t, env, master)
	mlog, _ := os.ReadFile(filepath.Join(c.dir, "master.log"))
	if !strings.Contains(string(mlog), "Running Spark version "+standaloneLine) && !strings.Contains(string(mlog), "version "+standaloneLine) {
		t.Logf("master log does not name %s (first 2000 bytes):\n%.2000s", standaloneLine, mlog)
	}
	r := prebake(t, env, c.submitArgs(t, master, "dev.prebake.demo.Greeting", "throw")...)
	res := parseRest(t, r)
	if r.code != exitcode.DriverFailed || res.State != "FAILED" {
		t.Fatalf("throwing app: exit %d, result %+v, want 80 and FAILED\nstderr:\n%s", r.code, res, r.stderr)
	}
}
