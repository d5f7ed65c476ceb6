package rest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/internal/testenv"
)

// TestFailedDriverLogTail reproduces finding 7 of review 3: a FAILED
// standalone driver said only "see its stderr on <the worker's RPC port>".
// The master's UI names the worker's UI, whose /log gives the driver's
// stderr: its last lines are the result's logTail and the message names
// the log page.
func TestFailedDriverLogTail(t *testing.T) {
	var worker *httptest.Server
	ui := http.NewServeMux()
	ui.HandleFunc("/json/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"aliveworkers":1,"workers":[{"id":"worker-9","webuiaddress":"http://127.0.0.1:1"},{"id":"worker-1","webuiaddress":%q}]}`, worker.URL)
	})
	var asked string
	ui.HandleFunc("/log", func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.RawQuery
		fmt.Fprint(w, "==== Bytes 0-90 of 90 of /opt/spark/work/driver-x/stderr ====\nINFO SparkContext: Running Spark version 3.5.7\nException in thread \"main\" java.lang.IllegalAccessError: class org.apache.spark.storage.StorageUtils$ (in unnamed module) cannot access class sun.nio.ch.DirectBuffer\n")
	})
	worker = httptest.NewServer(ui)
	t.Cleanup(worker.Close)

	step := sparkresttest.Step{WorkerID: "worker-1", WorkerHostPort: "127.0.0.1:40000"}
	run, end := step, step
	run.State, end.State = "RUNNING", "FAILED"
	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"}, run, end))
	addr := fakeMaster(t, fake)
	var log testenv.SyncBuffer
	res := submitREST(context.Background(), submitArgs("spark://"+addr), fastOpts(&log, WithMasterUI(worker.URL))...)
	want := []string{"INFO SparkContext: Running Spark version 3.5.7", `Exception in thread "main" java.lang.IllegalAccessError: class org.apache.spark.storage.StorageUtils$ (in unnamed module) cannot access class sun.nio.ch.DirectBuffer`}
	if diff := cmp.Diff(want, res.LogTail); diff != "" {
		t.Errorf("log tail (-want +got):\n%s", diff)
	}
	if !strings.Contains(asked, "driverId="+res.SubmissionID) || !strings.Contains(asked, "logType=stderr") {
		t.Errorf("worker /log asked %q", asked)
	}
	if page := worker.URL + "/logPage/?driverId=" + res.SubmissionID + "&logType=stderr"; !strings.Contains(res.Message, page) || !strings.Contains(res.Message, "work/"+res.SubmissionID+"/stderr") {
		t.Errorf("message %q does not name the log page %s", res.Message, page)
	}
	if !strings.Contains(res.Message, "--driver-java-options '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED") {
		t.Errorf("message %q does not give the Java 17 workaround", res.Message)
	}
	// No UI to ask: the hint alone, and no wait.
	fake2 := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"}, run, end))
	res = submitREST(context.Background(), submitArgs("spark://"+fakeMaster(t, fake2)), fastOpts(&log, WithMasterUI("http://"+refusedAddr(t)))...)
	if res.LogTail != nil || !strings.Contains(res.Message, "work/"+res.SubmissionID+"/stderr") {
		t.Errorf("no UI: tail %q, message %q", res.LogTail, res.Message)
	}
}
