package rest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

// fakeMaster serves a fake REST server on 127.0.0.1 and returns its
// host:port.
func fakeMaster(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// refusedAddr is a 127.0.0.1 address nothing listens on.
func refusedAddr(t *testing.T) string {
	return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
}

func fastOpts(log *testenv.SyncBuffer, more ...Option) []Option {
	return append([]Option{WithLog(log),
		WithPollInterval(5 * time.Millisecond), WithRetry(3, 5*time.Millisecond, 5)}, more...)
}

// submitArgs is a cluster-mode submission to master, loaded with the
// environment SPARK_SCALA_VERSION=2.12 (sent with it).
func submitArgs(master string) *submit.Submission {
	sub, err := load([]string{"--master", master, "--deploy-mode", "cluster", "--class", "com.example.Main",
		"--jars", "s3a://b/jars/a_b-1.0.jar", "hdfs:///app.jar", "x"}, []string{"SPARK_SCALA_VERSION=2.12"})
	if err != nil {
		panic(err)
	}
	return sub
}

// load is submit.LoadSubmission of args with the environment environ.
func load(args, environ []string) (*submit.Submission, error) {
	return submit.LoadSubmission(args, environ)
}

// mustLoad loads args with an empty environment.
func mustLoad(args []string) *submit.Submission {
	sub, err := load(args, nil)
	if err != nil {
		panic(err)
	}
	return sub
}

// buildCreate is BuildCreateRequest of args loaded with environ.
func buildCreate(args, environ []string, opts ...Option) (*CreateSubmissionRequest, error) {
	sub, err := load(args, environ)
	if err != nil {
		return nil, err
	}
	return BuildCreateRequest(sub, opts...)
}

func states(r *Result) []string {
	var s []string
	for _, t := range r.Transitions {
		s = append(s, t.State)
	}
	return s
}

func TestRestDriverEnds(t *testing.T) {
	worker := sparkresttest.Step{WorkerID: "worker-1", WorkerHostPort: "10.0.0.5:40000"}
	tests := []struct {
		name    string
		end     sparkresttest.Step
		want    runEnd
		wantMsg string
	}{
		{"finished", sparkresttest.Step{State: "FINISHED"}, runEnd{}, ""},
		{"failed", sparkresttest.Step{State: "FAILED", Exception: "java.lang.RuntimeException: boom"}, driverFailed, "boom"},
		{"killed", sparkresttest.Step{State: "KILLED"}, driverFailed, "KILLED"},
		{"error", sparkresttest.Step{State: "ERROR", Exception: "java.io.FileNotFoundException: hdfs:///app.jar"}, driverFailed, "FileNotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := worker
			run.State = "RUNNING"
			end := tt.end
			end.WorkerID, end.WorkerHostPort = worker.WorkerID, worker.WorkerHostPort
			fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"}, run, end))
			addr := fakeMaster(t, fake)
			var log testenv.SyncBuffer
			res := submitREST(context.Background(), submitArgs("spark://"+addr), fastOpts(&log)...)
			if got := endOf(res.Err()); got != tt.want {
				t.Fatalf("end %+v, want %+v (%v)\nlog:\n%s", got, tt.want, res.Err(), log.String())
			}
			if !strings.Contains(res.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", res.Message, tt.wantMsg)
			}
			// Review 3, finding 7: a failure says where the driver's log is
			// (before: "see its stderr on 10.0.0.5:40000", the worker's RPC port).
			if tt.end.State == "FAILED" {
				for _, want := range []string{"work/" + res.SubmissionID + "/stderr", "worker-1 on 10.0.0.5", "http://10.0.0.5:8081/logPage/?driverId=" + res.SubmissionID + "&logType=stderr"} {
					if !strings.Contains(res.Message, want) {
						t.Errorf("message %q does not say where the log is (%q)", res.Message, want)
					}
				}
			}
			if diff := cmp.Diff([]string{"SUBMITTED", "RUNNING", tt.end.State}, states(res)); diff != "" {
				t.Errorf("transitions (-want +got):\n%s", diff)
			}
			if !strings.Contains(log.String(), "is RUNNING on worker-1 (10.0.0.5:40000)") {
				t.Errorf("transition with worker not printed:\n%s", log.String())
			}
			if !strings.HasPrefix(res.SubmissionID, "driver-") || res.Timings.Submitted == nil || res.Timings.Running == nil {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestRestRelaunchingAndUnknownAreNotTerminal(t *testing.T) {
	fake := sparkresttest.New(sparkresttest.WithScript(
		sparkresttest.Step{State: "SUBMITTED"},
		sparkresttest.Step{State: "RUNNING", WorkerID: "worker-1"},
		sparkresttest.Step{State: "RELAUNCHING", Polls: 2},
		sparkresttest.Step{State: "RUNNING", WorkerID: "worker-2"},
		sparkresttest.Step{State: "UNKNOWN", Polls: 3},
		sparkresttest.Step{State: "RUNNING", WorkerID: "worker-2"},
		sparkresttest.Step{State: "FINISHED", WorkerID: "worker-2"},
	))
	var log testenv.SyncBuffer
	res := submitREST(context.Background(), submitArgs("spark://"+fakeMaster(t, fake)), fastOpts(&log)...)
	if res.Err() != nil {
		t.Fatalf("kind %v: %v\n%s", errdefs.KindOf(res.Err()), res.Err(), log.String())
	}
	want := []string{"SUBMITTED", "RUNNING", "RELAUNCHING", "RUNNING", "UNKNOWN", "RUNNING", "FINISHED"}
	if diff := cmp.Diff(want, states(res)); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
	for _, s := range []string{"supervised driver restarting", "master recovering"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
}

func TestRestStandbyMovesToNextMaster(t *testing.T) {
	standby := sparkresttest.New(sparkresttest.WithStandby())
	alive := sparkresttest.New()
	m1, m2 := fakeMaster(t, standby), fakeMaster(t, alive)
	var log testenv.SyncBuffer
	res := submitREST(context.Background(), submitArgs("spark://"+m1+","+m2), fastOpts(&log)...)
	if res.Err() != nil || res.RestURL != "http://"+m2 {
		t.Fatalf("kind %v via %s: %v", errdefs.KindOf(res.Err()), res.RestURL, res.Err())
	}
	if got := len(standby.Requests()); got != 1 {
		t.Errorf("standby got %d requests, want 1 (the create; polls stick to the leader)", got)
	}
	// Every master a standby: no ALIVE master, exit 69.
	res = submitREST(context.Background(), submitArgs("spark://"+m1+","+m1), fastOpts(&log)...)
	if !errors.Is(res.Err(), ErrNoAliveMaster) || errdefs.KindOf(res.Err()) != errdefs.Unavailable {
		t.Errorf("all standby: %v (kind %v)", res.Err(), errdefs.KindOf(res.Err()))
	}
	// A status query on a standby also moves on.
	id := "driver-20260101000000-0007"
	alive.AddDriver(id, sparkresttest.Step{State: "RUNNING"})
	r, err := statusREST(context.Background(), "spark://"+m1+","+m2, id, fastOpts(&log)...)
	if err != nil || r.DriverState != "RUNNING" {
		t.Errorf("status via standby: %v %+v", err, r)
	}
}

func TestRestRefusedMovesToNextMaster(t *testing.T) {
	var log testenv.SyncBuffer
	m2 := fakeMaster(t, sparkresttest.New())
	res := submitREST(context.Background(), submitArgs("spark://"+refusedAddr(t)+","+m2), fastOpts(&log)...)
	if res.Err() != nil {
		t.Fatalf("kind %v: %v", errdefs.KindOf(res.Err()), res.Err())
	}
}

func TestRestDisabled(t *testing.T) {
	// Nothing on the REST port of either master, or something that is not
	// a REST server (the RPC port, a web UI).
	notREST := fakeMaster(t, http.NotFoundHandler())
	rpc, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	go func() {
		for {
			c, err := rpc.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte{0, 0, 0, 0x10, 0xde, 0xad})
			c.Close()
		}
	}()
	// An RPC port that reads the request and hangs up: the request may have
	// been handled, so it is not repeated, and the hint names the REST port.
	hangup, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hangup.Close()
	go func() {
		for {
			c, err := hangup.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 4096))
			c.Close()
		}
	}()
	var log testenv.SyncBuffer
	res := submitREST(context.Background(), submitArgs("spark://"+hangup.Addr().String()), fastOpts(&log)...)
	if !errors.Is(res.Err(), ErrMaybeSubmitted) || !strings.Contains(res.Message, "spark.master.rest.enabled=true") || errdefs.OptionOf(res.Err()) != "rest.WithPort" {
		t.Errorf("hang-up: kind %v: %v", errdefs.KindOf(res.Err()), res.Err())
	}
	for _, master := range []string{
		"spark://" + refusedAddr(t) + "," + refusedAddr(t),
		"spark://" + notREST,
		"spark://" + rpc.Addr().String(),
	} {
		var log testenv.SyncBuffer
		res := submitREST(context.Background(), submitArgs(master), fastOpts(&log)...)
		if errdefs.KindOf(res.Err()) != errdefs.Unavailable || !errors.Is(res.Err(), ErrUnavailable) {
			t.Errorf("%s: kind %v: %v", master, errdefs.KindOf(res.Err()), res.Err())
			continue
		}
		if !strings.Contains(res.Message, "spark.master.rest.enabled=true") || errdefs.OptionOf(res.Err()) != "rest.WithPort" {
			t.Errorf("%s: no fix in %q (option %q, want rest.WithPort: the CLI names --rest-port)", master, res.Message, errdefs.OptionOf(res.Err()))
		}
	}
}

func TestRestProtocolVersion468(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New(sparkresttest.WithProtocolVersion("v2"))
	res := submitREST(context.Background(), submitArgs("spark://"+fakeMaster(t, fake)), fastOpts(&log)...)
	if !errors.Is(res.Err(), ErrProtocolVersion) || errdefs.KindOf(res.Err()) != errdefs.Unavailable {
		t.Fatalf("kind %v: %v", errdefs.KindOf(res.Err()), res.Err())
	}
	for _, s := range []string{"HTTP 468", "protocol v1", "speaks v2", "Unknown protocol version 'v1'"} {
		if !strings.Contains(res.Message, s) {
			t.Errorf("message %q lacks %q", res.Message, s)
		}
	}
	if res.Reason != "ProtocolVersion" {
		t.Errorf("reason %q", res.Reason)
	}
}

func TestRestMissingField400(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New()
	c, err := NewClient("spark://"+fakeMaster(t, fake), fastOpts(&log)...)
	if err != nil {
		t.Fatal(err)
	}
	req, err := BuildCreateRequest(mustLoad([]string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "--class", "com.example.Main",
		"--jars", "s3a://b/jars/a_b-1.0.jar", "hdfs:///app.jar", "x"}))
	if err != nil {
		t.Fatal(err)
	}
	req.MainClass = nil // what a jar without --class would send
	_, err = c.Create(context.Background(), req)
	if !errors.Is(err, ErrRejected) || errdefs.KindOf(err) != errdefs.Invalid {
		t.Fatalf("err %v (kind %v)", err, errdefs.KindOf(err))
	}
	if !strings.Contains(err.Error(), "HTTP 400") || !strings.Contains(err.Error(), "Main class is missing.") || strings.Contains(err.Error(), "\tat ") {
		t.Errorf("message %q", err.Error())
	}
}

func TestRestUnknownAndEvictedID(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "RUNNING"}))
	var mu sync.Mutex
	polls := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/status/") {
			mu.Lock()
			polls++
			if polls == 3 {
				fake.Evict(r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:])
			}
			mu.Unlock()
		}
		fake.ServeHTTP(w, r)
	})
	master := "spark://" + fakeMaster(t, h)
	res := submitREST(context.Background(), submitArgs(master), fastOpts(&log)...)
	if errdefs.KindOf(res.Err()) != errdefs.NotFound || res.Reason != "Evicted" || !strings.Contains(res.Message, "after it was RUNNING") {
		t.Errorf("evicted: kind %v reason %s: %s", errdefs.KindOf(res.Err()), res.Reason, res.Message)
	}
	res = attachREST(context.Background(), master, "driver-20000101000000-9999", fastOpts(&log)...)
	if errdefs.KindOf(res.Err()) != errdefs.NotFound || res.Reason != "NotFound" || !errors.Is(res.Err(), ErrSubmissionNotFound) {
		t.Errorf("unknown: kind %v reason %s: %v", errdefs.KindOf(res.Err()), res.Reason, res.Err())
	}
	if _, err := statusREST(context.Background(), master, "driver-20000101000000-9999", fastOpts(&log)...); errdefs.KindOf(err) != errdefs.NotFound {
		t.Errorf("status of unknown id: %v", err)
	}
}

func TestRestDroppedConnectionMidPoll(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"}, sparkresttest.Step{State: "RUNNING", Polls: 2}, sparkresttest.Step{State: "FINISHED"}))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/status/") && len(fake.Requests()) == 3 {
			fake.DropStatus(3) // the connection drops three times in a row, mid-run
		}
		fake.ServeHTTP(w, r)
	})
	res := submitREST(context.Background(), submitArgs("spark://"+fakeMaster(t, h)), fastOpts(&log)...)
	if res.Err() != nil || res.State != "FINISHED" {
		t.Fatalf("kind %v state %s: %v\n%s", errdefs.KindOf(res.Err()), res.State, res.Err(), log.String())
	}
	// Go's transport silently retries a GET once on a reused connection
	// that drops, so 2 or 3 of the 3 drops surface as failed polls.
	if n := strings.Count(log.String(), "polling "+res.SubmissionID+" failed"); n < 2 {
		t.Errorf("%d failed polls logged, want 2 or 3:\n%s", n, log.String())
	}
	// Too many failures in a row: the state is unknown, never "finished".
	fake2 := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "RUNNING"}))
	h2 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/status/") {
			fake2.DropStatus(1)
		}
		fake2.ServeHTTP(w, r)
	})
	res = submitREST(context.Background(), submitArgs("spark://"+fakeMaster(t, h2)), fastOpts(&log)...)
	if errdefs.KindOf(res.Err()) != errdefs.Unavailable || !strings.Contains(res.Message, "state is unknown") {
		t.Errorf("kind %v: %s", errdefs.KindOf(res.Err()), res.Message)
	}
}

func TestRestTimeout(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "RUNNING"}))
	res := submitREST(context.Background(), submitArgs("spark://"+fakeMaster(t, fake)), fastOpts(&log, WithTimeout(200*time.Millisecond))...)
	if errdefs.KindOf(res.Err()) != errdefs.Timeout || res.Reason != "Timeout" || !strings.Contains(res.Message, "prebake kill "+res.SubmissionID) {
		t.Fatalf("kind %v reason %s: %s", errdefs.KindOf(res.Err()), res.Reason, res.Message)
	}
	// The library names its option; the CLI's hint names --timeout.
	if !errors.Is(res.Err(), errdefs.Timeout) || errdefs.OptionOf(res.Err()) != "rest.WithTimeout" || !strings.Contains(res.Message, "time limit of 200ms reached") {
		t.Errorf("err %v (option %q), want errdefs.Timeout of rest.WithTimeout", res.Err(), errdefs.OptionOf(res.Err()))
	}
	for _, r := range fake.Requests() {
		if strings.Contains(r.Path, "/kill/") {
			t.Errorf("a timeout killed the driver")
		}
	}
}

func TestRestCancelKills(t *testing.T) {
	for _, kill := range []bool{true, false} {
		t.Run(fmt.Sprint("kill=", kill), func(t *testing.T) {
			var log testenv.SyncBuffer
			fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "RUNNING"}))
			ctx, cancel := context.WithCancel(context.Background())
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fake.ServeHTTP(w, r)
				if strings.Contains(r.URL.Path, "/status/") {
					cancel() // SIGINT while RUNNING
				}
			})
			res := submitREST(ctx, submitArgs("spark://"+fakeMaster(t, h)), fastOpts(&log, WithKillOnCancel(kill))...)
			if got := endOf(res.Err()); res.Reason != "Cancelled" || got != (runEnd{Kind: errdefs.DriverFailed}) {
				t.Fatalf("end %+v reason %s: %s", got, res.Reason, res.Message)
			}
			var kills []string
			for _, r := range fake.Requests() {
				if strings.HasPrefix(r.Path, "/v1/submissions/kill/") {
					kills = append(kills, r.Method+" "+r.Path)
				}
			}
			var want []string
			if kill {
				want = []string{"POST /v1/submissions/kill/" + res.SubmissionID}
				if !strings.Contains(res.Message, "Kill request for "+res.SubmissionID+" submitted") {
					t.Errorf("message %q", res.Message)
				}
			}
			if diff := cmp.Diff(want, kills); diff != "" {
				t.Errorf("kills (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestMesos(t *testing.T) {
	tests := []struct {
		task string
		want runEnd
	}{{"TASK_FINISHED", runEnd{}}, {"TASK_FAILED", driverFailed}, {"TASK_KILLED", driverFailed}}
	for _, tt := range tests {
		t.Run(tt.task, func(t *testing.T) {
			var log testenv.SyncBuffer
			msg := "task_id {\n  value: \"driver-x\"\n}\nstate: " + tt.task + "\n"
			fake := sparkresttest.New(sparkresttest.WithMode(sparkresttest.Mesos), sparkresttest.WithScript(
				sparkresttest.Step{State: "QUEUED"}, sparkresttest.Step{State: "RUNNING", Message: "state: TASK_RUNNING"},
				sparkresttest.Step{State: "RETRYING", Message: "state: TASK_LOST"}, sparkresttest.Step{State: "FINISHED", Message: msg}))
			args := []string{"--master", "mesos://" + fakeMaster(t, fake), "--deploy-mode", "cluster", "--class", "C", "http://h/app.jar"}
			res := submitREST(context.Background(), mustLoad(args), fastOpts(&log)...)
			if got := endOf(res.Err()); got != tt.want || res.TaskState != tt.task || res.Reason != tt.task {
				t.Fatalf("end %+v task %s reason %s: %v\n%s", got, res.TaskState, res.Reason, res.Err(), log.String())
			}
			if diff := cmp.Diff([]string{"QUEUED", "RUNNING", "RETRYING", "FINISHED"}, states(res)); diff != "" {
				t.Errorf("transitions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestStatusAndKill(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New()
	master := "spark://" + fakeMaster(t, fake)
	id := "driver-20261129101010-0001"
	fake.AddDriver(id, sparkresttest.Step{State: "RUNNING", WorkerID: "worker-9"})
	r, err := statusREST(context.Background(), master, id, fastOpts(&log)...)
	if err != nil || r.DriverState != "RUNNING" || r.WorkerID != "worker-9" {
		t.Fatalf("status: %v %+v", err, r)
	}
	if _, err := killREST(context.Background(), master, id, fastOpts(&log)...); err != nil {
		t.Fatalf("kill: %v", err)
	}
	r, err = statusREST(context.Background(), master, id, fastOpts(&log)...)
	if err != nil || r.DriverState != "KILLED" {
		t.Errorf("after kill: %v %+v", err, r)
	}
	_, err = killREST(context.Background(), master, id, fastOpts(&log)...)
	if errdefs.KindOf(err) != errdefs.NotFound || !strings.Contains(err.Error(), "has already finished or does not exist") {
		t.Errorf("second kill: %v", err)
	}
}

func TestRestAttach(t *testing.T) {
	var log testenv.SyncBuffer
	fake := sparkresttest.New()
	id := "driver-20261129101010-0002"
	fake.AddDriver(id, sparkresttest.Step{State: "RUNNING", Polls: 2}, sparkresttest.Step{State: "FAILED"})
	res := attachREST(context.Background(), "spark://"+fakeMaster(t, fake), id, fastOpts(&log)...)
	if errdefs.KindOf(res.Err()) != errdefs.DriverFailed || res.SubmissionID != id || res.State != "FAILED" {
		t.Fatalf("kind %v: %+v", errdefs.KindOf(res.Err()), res)
	}
	for _, r := range fake.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("attach sent %s %s", r.Method, r.Path)
		}
	}
}

// exitSource is the source cmd reports for a run that ended with err.
// runEnd is what a run's error says (errdefs): its kind, the driver's
// exit code (errdefs.DriverExit) and whether the driver decided it; the
// zero value for success.
type runEnd struct {
	Kind   errdefs.Kind
	Code   int
	Driver bool
}

// driverFailed is the end of a driver that failed with no exit code.
var driverFailed = runEnd{Kind: errdefs.DriverFailed, Driver: true}

func endOf(err error) runEnd {
	if err == nil {
		return runEnd{}
	}
	e := errdefs.Outermost(err)
	if e == nil {
		return runEnd{Kind: -1} // unclassified
	}
	return runEnd{e.Kind, e.Code, e.Driver}
}
