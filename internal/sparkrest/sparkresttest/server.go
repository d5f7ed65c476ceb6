// Package sparkresttest is a protocol-faithful fake of Spark's
// StandaloneRestServer and MesosRestServer, for tests.
//
// It is written from Spark's deploy/rest sources: the exact JSON
// (alphabetic keys, nulls omitted, Jackson's DefaultPrettyPrinter layout,
// via package sparkrest), Spark's validation (400 with "Malformed request:
// …"), 468 for an unknown protocol version, replayable driver-state
// sequences, a standby master, evicted ids, dropped connections and the
// Mesos dispatcher's states.
package sparkresttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prebake/prebake/internal/sparkrest"
)

// Mode selects which of Spark's REST servers the fake plays.
type Mode int

const (
	// Standalone is the standalone master's StandaloneRestServer (:6066).
	Standalone Mode = iota
	// Mesos is the Mesos dispatcher's MesosRestServer (:7077, Spark ≤3.5).
	Mesos
)

// Step is one stage of a driver's replayed life, as the status endpoint
// reports it.
type Step struct {
	State          string // driverState: SUBMITTED, RUNNING, RELAUNCHING, UNKNOWN, FINISHED… (Mesos: QUEUED, RUNNING, RETRYING, FINISHED)
	WorkerID       string // standalone: workerId
	WorkerHostPort string // standalone: workerHostPort
	// Exception is the exception the standalone master recorded for the
	// driver; the status message becomes "Exception from the cluster:\n" + it.
	Exception string
	// Message is the raw status message (Mesos: the TaskStatus text, e.g.
	// "state: TASK_FAILED").
	Message string
	// Polls is how many status answers this step lasts (default 1). The
	// last step lasts forever.
	Polls int
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Body   string
}

// Option configures a Server.
type Option func(*Server)

// WithMode selects the standalone master (default) or the Mesos dispatcher.
func WithMode(m Mode) Option { return func(s *Server) { s.mode = m } }

// WithVersion sets serverSparkVersion (default "3.5.1"). Versions from 4.0
// relax the validation of appArgs, environmentVariables and spark.app.name.
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// WithProtocolVersion sets the protocol version the server speaks (Spark
// only has "v1"; another value makes every v1 request a 468).
func WithProtocolVersion(v string) Option { return func(s *Server) { s.protocol = v } }

// WithScript sets the driver-state sequence each new submission replays.
// The default is SUBMITTED, RUNNING, FINISHED.
func WithScript(steps ...Step) Option { return func(s *Server) { s.script = steps } }

// WithStandby makes the master a standby (not ALIVE) one.
func WithStandby() Option { return func(s *Server) { s.standby = "STANDBY" } }

// WithRetainedDrivers sets spark.deploy.retainedDrivers (default 200):
// older completed drivers are forgotten.
func WithRetainedDrivers(n int) Option { return func(s *Server) { s.retained = n } }

// WithClock sets the clock used for submission ids.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// Server is a fake Spark REST submission server. It is an http.Handler;
// serve it with httptest.NewServer (127.0.0.1).
type Server struct {
	mode     Mode
	version  string
	protocol string
	script   []Step
	retained int
	now      func() time.Time

	mu        sync.Mutex
	standby   string // "" when ALIVE, else the recovery state
	notReady  bool   // Mesos: scheduler not ready
	drivers   map[string]*driver
	completed []string // completed driver ids, oldest first
	next      int
	drop      int // status requests to drop
	lastCause string
	requests  []Request
}

type driver struct {
	id     string
	steps  []Step
	polls  int // status answers given
	killed bool
	done   bool
}

// New returns a fake REST server.
func New(opts ...Option) *Server {
	s := &Server{
		version:  "3.5.1",
		protocol: "v1",
		retained: 200,
		now:      time.Now,
		drivers:  map[string]*driver{},
		script: []Step{
			{State: "SUBMITTED"},
			{State: "RUNNING", WorkerID: "worker-20261129000000-127.0.0.1-40000", WorkerHostPort: "127.0.0.1:40000"},
			{State: "FINISHED", WorkerID: "worker-20261129000000-127.0.0.1-40000", WorkerHostPort: "127.0.0.1:40000"},
		},
	}
	for _, o := range opts {
		o(s)
	}
	if s.mode == Mesos && len(s.script) > 0 && s.script[0].State == "SUBMITTED" {
		s.script = []Step{{State: "QUEUED"}, {State: "RUNNING", Message: "state: TASK_RUNNING"}, {State: "FINISHED", Message: "state: TASK_FINISHED"}}
	}
	return s
}

// SetStandby makes the master a standby (true) or the ALIVE leader (false).
func (s *Server) SetStandby(standby bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.standby = ""
	if standby {
		s.standby = "STANDBY"
	}
}

// SetNotReady makes the Mesos scheduler refuse create and kill.
func (s *Server) SetNotReady(notReady bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notReady = notReady
}

// DropStatus makes the next n status requests close the connection without
// an answer.
func (s *Server) DropStatus(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop = n
}

// AddDriver registers a submission made elsewhere, replaying steps.
func (s *Server) AddDriver(id string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drivers[id] = &driver{id: id, steps: steps}
}

// Evict forgets id, as the master does past spark.deploy.retainedDrivers.
func (s *Server) Evict(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.drivers, id)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastValidationCause returns why the last create failed validation (Spark
// logs it on the master; the client sees only the outer exception).
func (s *Server) LastValidationCause() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastCause
}

// response is every response message, fields in Jackson's alphabetic order,
// nulls omitted.
type response struct {
	Action                 string   `json:"action"`
	DriverState            string   `json:"driverState,omitempty"`
	HighestProtocolVersion string   `json:"highestProtocolVersion,omitempty"`
	Message                string   `json:"message,omitempty"`
	ServerSparkVersion     string   `json:"serverSparkVersion,omitempty"`
	SubmissionID           string   `json:"submissionId,omitempty"`
	Success                *bool    `json:"success,omitempty"`
	UnknownFields          []string `json:"unknownFields,omitempty"`
	WorkerHostPort         string   `json:"workerHostPort,omitempty"`
	WorkerID               string   `json:"workerId,omitempty"`
}

func boolp(b bool) *bool { return &b }

const pkg = "org.apache.spark.deploy.rest"

// stack is what formatException appends: the stack trace, one "\tat" line each.
func stack(frames ...string) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteString("\n\tat " + f)
	}
	return b.String()
}

func (s *Server) errorResponse(msg string) *response {
	return &response{Action: "ErrorResponse", Message: msg, ServerSparkVersion: s.version}
}

func (s *Server) send(w http.ResponseWriter, code int, r *response) {
	b, err := sparkrest.Marshal(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// ServeHTTP routes as RestSubmissionServer's servlet mapping does:
// /v1/submissions/{create,kill,status}/* and an ErrorServlet for the rest.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Body: string(body)})
	s.mu.Unlock()

	base := "/" + s.protocol + "/submissions/"
	for _, ep := range []string{"create", "kill", "status"} {
		prefix := base + ep
		if r.URL.Path != prefix && !strings.HasPrefix(r.URL.Path, prefix+"/") {
			continue
		}
		id := strings.Trim(strings.TrimPrefix(r.URL.Path, prefix), "/")
		switch {
		case ep == "create" && r.Method == http.MethodPost:
			s.create(w, body)
		case ep == "kill" && r.Method == http.MethodPost:
			if id == "" {
				s.send(w, http.StatusBadRequest, s.errorResponse("Submission ID is missing in kill request."))
				return
			}
			s.kill(w, id)
		case ep == "status" && r.Method == http.MethodGet:
			if id == "" {
				s.send(w, http.StatusBadRequest, s.errorResponse("Submission ID is missing in status request."))
				return
			}
			s.status(w, id)
		default:
			// HttpServlet's default for a method the servlet does not implement.
			http.Error(w, "HTTP method "+r.Method+" is not supported by this URL", http.StatusMethodNotAllowed)
		}
		return
	}
	s.errorServlet(w, r.URL.Path)
}

func (s *Server) errorServlet(w http.ResponseWriter, path string) {
	var parts []string
	for _, p := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	mismatch := false
	var msg string
	switch {
	case len(parts) == 0:
		msg = "Missing protocol version."
	case parts[0] == s.protocol && len(parts) == 1:
		msg = "Missing the /submissions prefix."
	case parts[0] == s.protocol && parts[1] == "submissions":
		msg = "Missing an action: please specify one of /create, /kill, or /status."
	case parts[0] == s.protocol:
		msg = fmt.Sprintf("Malformed path %s.", path)
	default:
		mismatch = true
		msg = fmt.Sprintf("Unknown protocol version '%s'.", parts[0])
	}
	msg += fmt.Sprintf(" Please submit requests through http://[host]:[port]/%s/submissions/...", s.protocol)
	e := s.errorResponse(msg)
	if mismatch {
		e.HighestProtocolVersion = s.protocol
		s.send(w, 468, e)
		return
	}
	s.send(w, http.StatusBadRequest, e)
}

// createFields are CreateSubmissionRequest's properties.
var createFields = map[string]bool{
	"action": true, "message": true, "clientSparkVersion": true, "appResource": true,
	"mainClass": true, "appArgs": true, "sparkProperties": true, "environmentVariables": true,
}

var knownActions = map[string]bool{
	"CreateSubmissionRequest": true, "CreateSubmissionResponse": true, "KillSubmissionResponse": true,
	"SubmissionStatusResponse": true, "ErrorResponse": true,
}

func (s *Server) malformed(w http.ResponseWriter, exception string) {
	s.send(w, http.StatusBadRequest, s.errorResponse("Malformed request: "+exception+stack(
		pkg+".SubmitRestProtocolMessage$.fromJson(SubmitRestProtocolMessage.scala:131)",
		pkg+".SubmitRequestServlet.doPost(RestSubmissionServer.scala:296)",
	)))
}

func (s *Server) create(w http.ResponseWriter, body []byte) {
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		s.malformed(w, fmt.Sprintf("com.fasterxml.jackson.core.JsonParseException: %v", err))
		return
	}
	action, ok := raw["action"].(string)
	if !ok {
		s.malformed(w, fmt.Sprintf("%s.SubmitRestMissingFieldException: Action field not found in JSON:\n%s", pkg, body))
		return
	}
	if !knownActions[action] {
		// Class.forName fails outside the caught exceptions: Jetty answers 500.
		http.Error(w, "java.lang.ClassNotFoundException: "+pkg+"."+action, http.StatusInternalServerError)
		return
	}
	if action != "CreateSubmissionRequest" {
		// The response classes fail their own validation first.
		s.malformed(w, fmt.Sprintf("%s.SubmitRestProtocolException: Validation of message %s failed!", pkg, action))
		return
	}
	if cause := s.validateCreate(raw); cause != "" {
		// Spark's formatException shows only the outer exception; the cause
		// (kept in LastValidationCause) is only in the master's log.
		s.mu.Lock()
		s.lastCause = cause
		s.mu.Unlock()
		s.malformed(w, pkg+".SubmitRestProtocolException: Validation of message CreateSubmissionRequest failed!")
		return
	}
	props := map[string]string{}
	for k, v := range raw["sparkProperties"].(map[string]any) {
		if sv, ok := v.(string); ok {
			props[k] = sv
		}
	}
	if mc, _ := raw["mainClass"].(string); mc == "" && (s.mode == Standalone || raw["mainClass"] == nil) {
		s.malformed(w, pkg+".SubmitRestMissingFieldException: Main class is missing.")
		return
	}
	if s.mode == Mesos {
		if _, ok := props["spark.app.name"]; !ok {
			s.malformed(w, pkg+".SubmitRestMissingFieldException: Application name is missing.")
			return
		}
	}
	var unknown []string
	for k, v := range raw {
		if !createFields[k] || v == nil {
			unknown = append(unknown, k)
		}
	}
	sortStrings(unknown)

	s.mu.Lock()
	resp := &response{Action: "CreateSubmissionResponse", ServerSparkVersion: s.version, UnknownFields: unknown}
	switch {
	case s.mode == Standalone && s.standby != "":
		resp.Success = boolp(false)
		resp.Message = fmt.Sprintf("Current state is not alive: %s. Can only accept driver submissions in ALIVE state.", s.standby)
	case s.mode == Mesos && s.notReady:
		resp.Success = boolp(false)
		resp.Message = "Scheduler is not ready to take requests"
	default:
		s.next++
		id := fmt.Sprintf("driver-%s-%04d", s.now().UTC().Format("20060102150405"), s.next-1)
		s.drivers[id] = &driver{id: id, steps: append([]Step(nil), s.script...)}
		resp.SubmissionID = id
		resp.Success = boolp(true)
		if s.mode == Standalone {
			resp.Message = "Driver successfully submitted as " + id
		}
	}
	s.mu.Unlock()
	s.send(w, http.StatusOK, resp)
}

func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

var memoryRE = regexp.MustCompile(`(?i)^[0-9]+([kmgtp]b?|b)?$`)

// validateCreate is CreateSubmissionRequest.doValidate; it returns the
// cause of a failure, or "".
func (s *Server) validateCreate(raw map[string]any) string {
	missing := func(f string) string {
		return fmt.Sprintf("%s.SubmitRestMissingFieldException: '%s' is missing in message CreateSubmissionRequest.", pkg, f)
	}
	if raw["clientSparkVersion"] == nil {
		return missing("clientSparkVersion")
	}
	props, ok := raw["sparkProperties"].(map[string]any)
	if !ok {
		return pkg + ".SubmitRestProtocolException: No Spark properties set!"
	}
	if raw["appResource"] == nil {
		return missing("appResource")
	}
	legacy := !strings.HasPrefix(s.version, "4.") && !strings.HasPrefix(s.version, "5.")
	if legacy {
		for _, f := range []string{"appArgs", "environmentVariables"} {
			if raw[f] == nil {
				return missing(f)
			}
		}
		if props["spark.app.name"] == nil {
			return fmt.Sprintf("%s.SubmitRestMissingFieldException: Property 'spark.app.name' is missing in message CreateSubmissionRequest.", pkg)
		}
	}
	typed := func(key, kind string, ok func(string) bool) string {
		v, present := props[key].(string)
		if !present || ok(v) {
			return ""
		}
		return fmt.Sprintf("%s.SubmitRestProtocolException: Property '%s' expected %s value: actual was '%s'.", pkg, key, kind, v)
	}
	isBool := func(v string) bool { return strings.EqualFold(v, "true") || strings.EqualFold(v, "false") }
	isNum := func(v string) bool { _, err := strconv.ParseFloat(v, 64); return err == nil }
	for _, c := range []string{
		typed("spark.driver.supervise", "boolean", isBool),
		typed("spark.driver.cores", "numeric", isNum),
		typed("spark.cores.max", "numeric", isNum),
		typed("spark.driver.memory", "memory", memoryRE.MatchString),
		typed("spark.executor.memory", "memory", memoryRE.MatchString),
	} {
		if c != "" {
			return c
		}
	}
	return ""
}

var terminal = map[string]bool{"FINISHED": true, "FAILED": true, "KILLED": true, "ERROR": true}

// current returns the step d is in and advances it by one status answer.
func (d *driver) current() Step {
	if d.killed {
		return Step{State: "KILLED"}
	}
	if len(d.steps) == 0 {
		return Step{State: "SUBMITTED"}
	}
	n := d.polls
	d.polls++
	for i, st := range d.steps {
		p := st.Polls
		if p <= 0 {
			p = 1
		}
		if n < p || i == len(d.steps)-1 {
			return st
		}
		n -= p
	}
	return d.steps[len(d.steps)-1]
}

func (s *Server) status(w http.ResponseWriter, id string) {
	s.mu.Lock()
	if s.drop > 0 {
		s.drop--
		s.mu.Unlock()
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler)
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	resp := &response{Action: "SubmissionStatusResponse", ServerSparkVersion: s.version, SubmissionID: id}
	d, found := s.drivers[id]
	switch {
	case s.mode == Standalone && s.standby != "":
		resp.Success = boolp(false)
		resp.Message = "Exception from the cluster:\njava.lang.Exception: Current state is not alive: " + s.standby +
			". Can only request driver status in ALIVE state." + stack("org.apache.spark.deploy.master.Master$$anonfun$receiveAndReply$1.applyOrElse(Master.scala:476)")
	case !found:
		resp.Success = boolp(false)
		if s.mode == Mesos {
			resp.DriverState = "NOT_FOUND"
		}
	default:
		st := d.current()
		resp.Success = boolp(true)
		resp.DriverState = st.State
		resp.WorkerID = st.WorkerID
		resp.WorkerHostPort = st.WorkerHostPort
		resp.Message = st.Message
		if d.killed && s.mode == Mesos {
			resp.DriverState = "FINISHED"
			resp.Message = fmt.Sprintf("task_id {\n  value: \"%s\"\n}\nstate: TASK_KILLED\n", id)
		}
		if st.Exception != "" {
			resp.Message = "Exception from the cluster:\n" + st.Exception
		}
		if (terminal[resp.DriverState]) && !d.done {
			d.done = true
			s.completed = append(s.completed, id)
			for len(s.completed) > s.retained {
				delete(s.drivers, s.completed[0])
				s.completed = s.completed[1:]
			}
		}
	}
	s.mu.Unlock()
	s.send(w, http.StatusOK, resp)
}

func (s *Server) kill(w http.ResponseWriter, id string) {
	s.mu.Lock()
	resp := &response{Action: "KillSubmissionResponse", ServerSparkVersion: s.version, SubmissionID: id}
	d, found := s.drivers[id]
	if s.mode == Mesos {
		switch {
		case s.notReady:
			resp.SubmissionID = ""
			resp.Success = boolp(false)
			resp.Message = "Scheduler is not ready to take requests"
		case found && !d.done && !d.killed:
			d.killed = true
			resp.Success = boolp(true)
			resp.Message = "Killing running driver"
		case found:
			resp.Success = boolp(false)
			resp.Message = "Driver already terminated"
		default:
			resp.Success = boolp(false)
			resp.Message = "Cannot find driver"
		}
	} else {
		switch {
		case s.standby != "":
			resp.Success = boolp(false)
			resp.Message = fmt.Sprintf("Current state is not alive: %s. Can only kill drivers in ALIVE state.", s.standby)
		case found && !d.done && !d.killed:
			d.killed = true
			resp.Success = boolp(true)
			resp.Message = fmt.Sprintf("Kill request for %s submitted", id)
		default:
			resp.Success = boolp(false)
			resp.Message = fmt.Sprintf("Driver %s has already finished or does not exist", id)
		}
	}
	s.mu.Unlock()
	s.send(w, http.StatusOK, resp)
}
