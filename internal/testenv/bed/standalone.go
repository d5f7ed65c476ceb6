package bed

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// StandaloneServer is one real Spark standalone master (its REST server
// on) and one real worker on 127.0.0.1.
type StandaloneServer struct {
	MasterPid int    `json:"masterPid"`
	WorkerPid int    `json:"workerPid"`
	SparkHome string `json:"sparkHome"`
	Dir       string `json:"dir"`     // master.properties, master.log, worker.log
	WorkDir   string `json:"workDir"` // the worker's: a driver's stdout is WorkDir/ID/stdout
	RPCPort   int    `json:"rpcPort"`
	RestPort  int    `json:"restPort"`
	WebPort   int    `json:"webPort"`
	// RestByDefault leaves spark.master.rest.enabled unset: Spark 4.1+
	// turns the REST server on by default (SPARK-51165).
	RestByDefault bool `json:"restByDefault"`
	server
}

// standaloneEnv is the environment of a master or worker of sparkHome
// whose home and configuration are in dir.
func standaloneEnv(sparkHome, dir string) []string {
	return append(os.Environ(), "SPARK_HOME="+sparkHome, "SPARK_LOCAL_IP=127.0.0.1", "HOME="+dir,
		"SPARK_CONF_DIR="+filepath.Join(dir, "conf"), "SPARK_NO_DAEMONIZE=1")
}

// LaunchStandalone launches a master and a worker of sparkHome in dir and
// waits until the worker has registered (2 minutes at most); on an error
// it stops what it started.
func LaunchStandalone(sparkHome, dir string, restByDefault bool) (_ *StandaloneServer, err error) {
	s := &StandaloneServer{SparkHome: sparkHome, Dir: dir, WorkDir: filepath.Join(dir, "work"), RestByDefault: restByDefault}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		return nil, err
	}
	ports, err := testenv.FreePorts(4)
	if err != nil {
		return nil, err
	}
	s.RPCPort, s.RestPort, s.WebPort = ports[0], ports[1], ports[2]
	master, err := LaunchMaster(sparkHome, dir, "master", s.RPCPort, s.RestPort, s.WebPort, restByDefault)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, master)
	s.MasterPid = master.Cmd.Process.Pid
	worker, err := startProcess("worker", filepath.Join(dir, "worker.log"), standaloneEnv(sparkHome, dir),
		filepath.Join(sparkHome, "bin", "spark-class"), "org.apache.spark.deploy.worker.Worker",
		"--host", "127.0.0.1", "--webui-port", strconv.Itoa(ports[3]), "--cores", "2", "--memory", "1536m",
		"--work-dir", s.WorkDir, fmt.Sprintf("spark://127.0.0.1:%d", s.RPCPort))
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, worker)
	s.WorkerPid = worker.Cmd.Process.Pid
	err = waitReady(worker, "registered", 2*time.Minute, func() bool {
		var st struct {
			AliveWorkers int `json:"aliveworkers"`
		}
		return GetJSON(fmt.Sprintf("http://127.0.0.1:%d/json/", s.WebPort), &st) == nil && st.AliveWorkers > 0
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// LaunchMaster starts a master of sparkHome named name (dir/name.properties,
// dir/name.log) with its REST server on restPort and waits until that port
// answers (2 minutes at most).
func LaunchMaster(sparkHome, dir, name string, rpcPort, restPort, webPort int, restByDefault bool) (*testenv.Process, error) {
	props := filepath.Join(dir, name+".properties")
	conf := fmt.Sprintf("spark.master.rest.port=%d\n", restPort)
	if !restByDefault {
		conf = "spark.master.rest.enabled=true\n" + conf
	}
	if err := os.WriteFile(props, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	m, err := startProcess(name, filepath.Join(dir, name+".log"), standaloneEnv(sparkHome, dir),
		filepath.Join(sparkHome, "bin", "spark-class"), "org.apache.spark.deploy.master.Master",
		"--host", "127.0.0.1", "--port", strconv.Itoa(rpcPort), "--webui-port", strconv.Itoa(webPort), "--properties-file", props)
	if err != nil {
		return nil, err
	}
	restAddr := fmt.Sprintf("127.0.0.1:%d", restPort)
	if err := waitReady(m, "serving REST on "+restAddr, 2*time.Minute, func() bool { return answers(restAddr) }); err != nil {
		m.Stop(0, 20*time.Second, nil)
		return nil, err
	}
	return m, nil
}

// Stop stops the master and the worker (Spark's shutdown hooks stop the
// drivers a worker runs): SIGTERM, then SIGKILL after 20s. Only for a
// server the test launched itself (LaunchStandalone).
func (s *StandaloneServer) Stop() { s.stop() }

// GetJSON decodes the JSON document at url (5 s at most) into v: a
// master's /json/ or a submission's status.
func GetJSON(url string, v any) error {
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

var ownStandalone testenv.Shared[*StandaloneServer]

// publishedStandalone is the bed's standalone master and worker, waiting
// (3 minutes at most) while they start in the background.
func publishedStandalone() *StandaloneServer {
	s := published()
	for deadline := time.Now().Add(3 * time.Minute); s.StandaloneStarting && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		r, err := Read(StatePath())
		if err != nil {
			return nil
		}
		s = r
	}
	return s.Standalone
}

// Standalone is the run's shared standalone master and worker of
// sparkHome (REST server enabled by its properties) for a JVM test: the
// bed's when it runs that distribution, else one the test binary launches
// once. A test that needs another line or the REST server's default
// launches its own (LaunchStandalone).
func Standalone(t testing.TB, sparkHome string) *StandaloneServer {
	t.Helper()
	testenv.NeedJVM(t)
	b := publishedStandalone()
	ok := b != nil && b.SparkHome == sparkHome && !b.RestByDefault && alive(b.MasterPid) && alive(b.WorkerPid) &&
		answers(fmt.Sprintf("127.0.0.1:%d", b.RestPort))
	return own(t, "standalone", &ownStandalone, b, ok, func(dir string) (*StandaloneServer, error) {
		return LaunchStandalone(sparkHome, dir, false)
	})
}
