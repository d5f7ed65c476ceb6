package spark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/bed"
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
// worker on 127.0.0.1 (the test bed's, internal/testenv/bed, shared by the
// run's tests), and the tiny app built against its Spark.
type standaloneCluster struct {
	*bed.StandaloneServer
	appJar string
}

// sharedApp is the tiny app's jar, built once for the binary.
var sharedApp testenv.Shared[string]

// standalone attaches to the shared cluster (the bed's, or one launched
// on first use for the binary).
func standalone(t *testing.T) *standaloneCluster {
	t.Helper()
	sparkHome, _ := testenv.SparkHome(t, sparkVersion)
	s := bed.Standalone(t, sparkHome)
	return &standaloneCluster{StandaloneServer: s, appJar: appJar(t, sparkHome)}
}

// appJar builds the tiny app against sparkHome's jars, once per binary.
func appJar(t *testing.T, sparkHome string) string {
	t.Helper()
	return sharedApp.Get(t, func() (string, error) {
		dir, err := os.MkdirTemp("", "prebake-standalone-app-")
		if err != nil {
			return "", err
		}
		testenv.AtExit(func() { os.RemoveAll(dir) })
		jar, err := buildApp(sparkHome, dir)
		if err != nil {
			err = fmt.Errorf("standalone app: %w", err)
		}
		return jar, err
	})
}

// stopProc sends SIGTERM (Spark's shutdown hooks stop the drivers a worker
// runs), then SIGKILL after 20s.
func stopProc(p *testenv.Process) { p.Stop(0, 20*time.Second, nil) }

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
	b, _ := os.ReadFile(filepath.Join(c.WorkDir, id, "stdout"))
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
	master := fmt.Sprintf("spark://127.0.0.1:%d", c.RestPort)

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
		args = append([]string{args[0], "--master-ui", fmt.Sprintf("http://127.0.0.1:%d", c.WebPort)}, args[1:]...)
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
		stderrFile, _ := os.ReadFile(filepath.Join(c.WorkDir, res.SubmissionID, "stderr"))
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
		dead, err := bed.LaunchMaster(c.SparkHome, t.TempDir(), "dead-master", ports[0], ports[1], ports[2], false)
		if err != nil {
			t.Fatal(err)
		}
		stopProc(dead)
		ha := fmt.Sprintf("spark://127.0.0.1:%d,127.0.0.1:%d", ports[1], c.RestPort)
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
	master := fmt.Sprintf("spark://127.0.0.1:%d", c.RestPort)
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
		err := bed.GetJSON(fmt.Sprintf("http://127.0.0.1:%d/v1/submissions/status/%s", c.RestPort, res.SubmissionID), &st)
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
	s, err := bed.LaunchStandalone(home, t.TempDir(), true)
	if err != nil {
		t.Fatalf("standalone %s cluster: %v", standaloneLine, err)
	}
	t.Cleanup(s.Stop)
	jar, err := buildApp(home, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &standaloneCluster{StandaloneServer: s, appJar: jar}
	props, _ := os.ReadFile(filepath.Join(c.Dir, "master.properties"))
	if strings.Contains(string(props), "spark.master.rest.enabled") {
		t.Fatalf("the master's properties set spark.master.rest.enabled:\n%s", props)
	}
	master := fmt.Sprintf("spark://127.0.0.1:%d", c.RestPort)
	c.submitGreeting(t, env, master)
	mlog, _ := os.ReadFile(filepath.Join(c.Dir, "master.log"))
	if !strings.Contains(string(mlog), "Running Spark version "+standaloneLine) && !strings.Contains(string(mlog), "version "+standaloneLine) {
		t.Logf("master log does not name %s (first 2000 bytes):\n%.2000s", standaloneLine, mlog)
	}
	r := prebake(t, env, c.submitArgs(t, master, "dev.prebake.demo.Greeting", "throw")...)
	res := parseRest(t, r)
	if r.code != exitcode.DriverFailed || res.State != "FAILED" {
		t.Fatalf("throwing app: exit %d, result %+v, want 80 and FAILED\nstderr:\n%s", r.code, res, r.stderr)
	}
}
