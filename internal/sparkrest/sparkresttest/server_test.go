package sparkresttest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const validCreate = `{"action":"CreateSubmissionRequest","appArgs":[],"appResource":"hdfs:///a.jar","clientSparkVersion":"3.5.1",
"environmentVariables":{},"mainClass":"C","sparkProperties":{"spark.app.name":"a","spark.master":"spark://m:7077"}}`

func do(t *testing.T, h http.Handler, method, path, body string) (int, string) {
	t.Helper()
	s := httptest.NewServer(h)
	defer s.Close()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestCreateResponseExactBytes(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 11, 29, 10, 10, 10, 0, time.UTC) }
	s := New(WithClock(clock))
	body := strings.Replace(validCreate, `"action"`, `"extra":1,"message":null,"action"`, 1)
	code, got := do(t, s, "POST", "/v1/submissions/create", body)
	want := `{
  "action" : "CreateSubmissionResponse",
  "message" : "Driver successfully submitted as driver-20261129101010-0000",
  "serverSparkVersion" : "3.5.1",
  "submissionId" : "driver-20261129101010-0000",
  "success" : true,
  "unknownFields" : [ "extra", "message" ]
}`
	if code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestServerAnswers(t *testing.T) {
	without := func(field string) string {
		return strings.Replace(validCreate, `"`+field+`"`, `"x`+field+`"`, 1)
	}
	tests := []struct {
		name, method, path, body string
		opts                     []Option
		wantCode                 int
		want                     []string
	}{
		{"no appResource", "POST", "/v1/submissions/create", without("appResource"), nil, 400,
			[]string{`"action" : "ErrorResponse"`, "Malformed request: org.apache.spark.deploy.rest.SubmitRestProtocolException: Validation of message CreateSubmissionRequest failed!", "\\n\\tat "}},
		{"no appArgs 3.5", "POST", "/v1/submissions/create", without("appArgs"), nil, 400, []string{"Validation of message CreateSubmissionRequest failed!"}},
		{"no appArgs 4.0", "POST", "/v1/submissions/create", without("appArgs"), []Option{WithVersion("4.0.0")}, 200, []string{`"success" : true`, `"unknownFields" : [ "xappArgs" ]`}},
		{"no mainClass", "POST", "/v1/submissions/create", without("mainClass"), nil, 400, []string{"SubmitRestMissingFieldException: Main class is missing."}},
		{"no action", "POST", "/v1/submissions/create", `{"appResource":"x"}`, nil, 400, []string{"Action field not found in JSON"}},
		{"bad json", "POST", "/v1/submissions/create", `{`, nil, 400, []string{"JsonParseException"}},
		{"bad memory", "POST", "/v1/submissions/create", strings.Replace(validCreate, `"spark.app.name"`, `"spark.driver.memory":"lots","spark.app.name"`, 1), nil, 400, []string{"Validation of message"}},
		{"standby create", "POST", "/v1/submissions/create", validCreate, []Option{WithStandby()}, 200,
			[]string{`"success" : false`, "Current state is not alive: STANDBY. Can only accept driver submissions in ALIVE state."}},
		{"standby status", "GET", "/v1/submissions/status/driver-1", "", []Option{WithStandby()}, 200,
			[]string{`"success" : false`, "Exception from the cluster:\\njava.lang.Exception: Current state is not alive: STANDBY"}},
		{"unknown id", "GET", "/v1/submissions/status/driver-1", "", nil, 200, []string{`"submissionId" : "driver-1"`, `"success" : false`}},
		{"mesos unknown id", "GET", "/v1/submissions/status/driver-1", "", []Option{WithMode(Mesos)}, 200, []string{`"driverState" : "NOT_FOUND"`, `"success" : false`}},
		{"status without id", "GET", "/v1/submissions/status/", "", nil, 400, []string{"Submission ID is missing in status request."}},
		{"kill unknown", "POST", "/v1/submissions/kill/driver-1", "", nil, 200, []string{"Driver driver-1 has already finished or does not exist"}},
		{"kill via GET", "GET", "/v1/submissions/kill/driver-1", "", nil, 405, nil},
		{"unknown version", "GET", "/v9/submissions/status/d", "", nil, 468, []string{`"highestProtocolVersion" : "v1"`, "Unknown protocol version 'v9'."}},
		{"no version", "GET", "/", "", nil, 400, []string{"Missing protocol version. Please submit requests through http://[host]:[port]/v1/submissions/..."}},
		{"no action path", "GET", "/v1/submissions/", "", nil, 400, []string{"Missing an action"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := do(t, New(tt.opts...), tt.method, tt.path, tt.body)
			if code != tt.wantCode {
				t.Fatalf("HTTP %d, want %d: %s", code, tt.wantCode, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q:\n%s", w, body)
				}
			}
		})
	}
}

func TestLastValidationCause(t *testing.T) {
	s := New()
	do(t, s, "POST", "/v1/submissions/create", strings.Replace(validCreate, `"spark.app.name"`, `"spark.cores.max":"many","spark.app.name"`, 1))
	if got := s.LastValidationCause(); !strings.Contains(got, "Property 'spark.cores.max' expected numeric value: actual was 'many'.") {
		t.Errorf("cause %q", got)
	}
}
