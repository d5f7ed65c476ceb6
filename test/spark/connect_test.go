package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// connectVersion is the pyspark that ships sbin/start-connect-server.sh
// (the 3.5 and 4.0 wheels carry only spark-daemon.sh) and the Connect
// server jar.
const connectVersion = "4.3.0"

// greetingQuery asks, through pyspark's Connect client, for
// dev.prebake.demo.Greeting.hello (reflect runs a static method of a class
// on the server's session class path: only the demo package has it) in the
// session of argv[1]; with argv[2], it also asks in that other session and
// prints what failed there.
const greetingQuery = `import sys
from pyspark.sql import SparkSession
q = "SELECT reflect('dev.prebake.demo.Greeting', 'hello', 'connect') AS g"
spark = SparkSession.builder.remote(sys.argv[1]).create()
print("GREETING: %s" % spark.sql(q).collect()[0]["g"], flush=True)
if len(sys.argv) > 2:
    other = SparkSession.builder.remote(sys.argv[2]).create()
    try:
        other.sql(q).collect()
        print("OTHER SESSION: found", flush=True)
    except Exception as e:
        print("OTHER SESSION: %s" % str(e).splitlines()[0], flush=True)
`

// connectEnv is sparkEnvFor(connectVersion) with the server's log and pid
// directories in t's temp dir, and PYTHONPATH for the Connect client
// (pyspark and its connect dependencies: hack/infra.d/60-spark.sh).
func connectEnv(t *testing.T) (env []string, home, sparkHome, logDir string) {
	t.Helper()
	env, home = sparkEnvFor(t, connectVersion)
	sparkHome, pyPath := testenv.SparkHome(t, connectVersion)
	deps := os.Getenv("PREBAKE_CONNECT_PYTHONPATH")
	if deps == "" {
		deps = filepath.Join(testenv.CacheDir(), "pyspark-connect-deps-"+connectVersion)
	}
	if _, err := os.Stat(filepath.Join(deps, "grpc")); err != nil {
		testenv.Skip(t, "the Spark Connect client's dependencies are not installed in "+deps+": run hack/infra.sh")
	}
	if _, err := os.Stat(filepath.Join(sparkHome, "sbin", "start-connect-server.sh")); err != nil {
		testenv.Skip(t, "pyspark "+connectVersion+" has no sbin/start-connect-server.sh")
	}
	logDir = t.TempDir()
	env = append(env, "PYTHONPATH="+pyPath+string(os.PathListSeparator)+deps, "SPARK_LOG_DIR="+logDir, "SPARK_PID_DIR="+t.TempDir())
	return env, home, sparkHome, logDir
}

// stopConnectServer stops the daemon start-connect-server.sh started.
func stopConnectServer(t *testing.T, env []string, sparkHome string) {
	cmd := exec.Command(filepath.Join(sparkHome, "sbin", "spark-daemon.sh"), "stop", "org.apache.spark.sql.connect.service.SparkConnectServer", "1")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("stopping the Connect server: %v\n%s", err, out)
	}
}

// waitPort waits until 127.0.0.1:port accepts connections.
func waitPort(t *testing.T, port int, limit time.Duration, logDir string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("the Connect server did not listen on %d within %s:\n%s", port, limit, serverLog(logDir))
}

// serverLog is the Connect server's log (spark-daemon.sh's .out file).
func serverLog(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*.out"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// runPython runs the Connect client script with args.
func runPython(t *testing.T, env []string, script string, args ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "query.py")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// Under a load of 30 on 2 cores the client took 2m49s.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", append([]string{p}, args...)...)
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("python client: %s", time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("the Connect client failed: %v\n%s", err, out)
	}
	return string(out)
}

// TestConnectServerPackages: `prebake submit -- start-connect-server.sh
// --packages greeting --conf spark.connect.grpc.binding.port=…` resolves
// the package, rewrites the line (--jars, no --packages) and runs the real
// script, which starts the real Connect server (spark-daemon.sh,
// SparkConnectServer) with the jar on its class path: a query of pyspark's
// Connect client uses the package's class, and the server resolved nothing
// at start (no Ivy lines in its log, no ~/.ivy2*).
func TestConnectServerPackages(t *testing.T) {
	testenv.RequireIT(t)
	env, home, sparkHome, logDir := connectEnv(t)
	port := testenv.FreePort(t)
	t.Cleanup(func() { stopConnectServer(t, env, sparkHome) })
	r := prebake(t, env, "submit", "-o", "json", "--no-default-repositories", "--repositories", demoRepo(), "--",
		filepath.Join(sparkHome, "sbin", "start-connect-server.sh"), "--master", "local[2]",
		"--packages", "dev.prebake.demo:greeting:1.0",
		"--conf", fmt.Sprintf("spark.connect.grpc.binding.port=%d", port), "--conf", "spark.ui.enabled=false")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	waitPort(t, port, 6*time.Minute, logDir)
	out := runPython(t, env, greetingQuery, fmt.Sprintf("sc://127.0.0.1:%d/;user_id=prebake;session_id=%s", port, "3b241101-e2bb-4255-8caf-4136c566a962"))
	if !strings.Contains(out, "GREETING: hello connect from a jar that prebake resolved") {
		t.Errorf("the query did not use the packaged class:\n%s", out)
	}
	log := serverLog(logDir)
	if !strings.Contains(log, "dev.prebake.demo_greeting-1.0.jar") || strings.Contains(log, "--packages") {
		t.Errorf("the server did not get the jar through --jars:\n%s", log)
	}
	noIvyWork(t, home, log)
}

// TestConnectAddArtifacts: against the real Connect server started with no
// package, `prebake connect add --lock` pushes the locked jar into one
// session (ArtifactStatus, then AddArtifacts); a second push sends 0 jar
// bytes; a query in that session uses the packaged class, and the same
// query in another session does not find it (the jars are the session's).
func TestConnectAddArtifacts(t *testing.T) {
	testenv.RequireIT(t)
	env, home, sparkHome, logDir := connectEnv(t)
	port := testenv.FreePort(t)
	t.Cleanup(func() { stopConnectServer(t, env, sparkHome) })
	start := exec.Command(filepath.Join(sparkHome, "sbin", "start-connect-server.sh"), "--master", "local[2]",
		"--conf", fmt.Sprintf("spark.connect.grpc.binding.port=%d", port), "--conf", "spark.ui.enabled=false")
	start.Env = env
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start-connect-server.sh: %v\n%s", err, out)
	}
	lockFile := filepath.Join(t.TempDir(), "prebake.lock")
	if r := prebake(t, env, "resolve", "-o", "names", "--no-default-repositories", "--repositories", demoRepo(),
		"--packages", "dev.prebake.demo:greeting:1.0", "--lock", lockFile); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	waitPort(t, port, 6*time.Minute, logDir)
	remote := fmt.Sprintf("sc://127.0.0.1:%d/;user_id=prebake;session_id=%s", port, "7c9e6679-7425-40de-944b-e07fc1f90ae7")
	type pushJSON struct {
		Remote       string
		SessionID    string
		Sent         int
		Present      int
		JarBytesSent int64
		BytesSent    int64
		LockHash     string
		Jars         []struct{ File, Action string }
	}
	push := func() pushJSON {
		t.Helper()
		r := prebake(t, env, "connect", "add", "-o", "json", "--remote", remote, "--lock", lockFile)
		if r.code != 0 {
			t.Fatalf("connect add: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		var p pushJSON
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("-o json: %v\n%s", err, r.stdout)
		}
		t.Logf("push: %d sent (%d jar bytes, %d in all), %d present", p.Sent, p.JarBytesSent, p.BytesSent, p.Present)
		return p
	}
	first := push()
	if first.Sent != 1 || first.Present != 0 || first.JarBytesSent <= 0 || first.LockHash == "" || first.SessionID != "7c9e6679-7425-40de-944b-e07fc1f90ae7" {
		t.Errorf("first push %+v: want the one jar sent", first)
	}
	second := push()
	if second.Sent != 0 || second.Present != 1 || second.JarBytesSent != 0 || second.BytesSent != 0 {
		t.Errorf("second push %+v: want 0 bytes sent, the jar present", second)
	}
	other := fmt.Sprintf("sc://127.0.0.1:%d/;user_id=prebake;session_id=%s", port, "16fd2706-8baf-433b-82eb-8c7fada847da")
	out := runPython(t, env, greetingQuery, first.Remote, other)
	if !strings.Contains(out, "GREETING: hello connect from a jar that prebake resolved") {
		t.Errorf("the query in the pushed session did not use the packaged class:\n%s", out)
	}
	if !strings.Contains(out, "OTHER SESSION:") || strings.Contains(out, "OTHER SESSION: found") {
		t.Errorf("another session found the class (the jar must be the pushed session's only):\n%s", out)
	}
	noIvyWork(t, home, serverLog(logDir))
}
