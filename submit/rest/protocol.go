package rest

import (
	"encoding/json"
	"fmt"

	"github.com/prebake/prebake/internal/sparkrest"
)

// ProtocolVersion is the only version of Spark's REST submission
// protocol (RestSubmissionServer.PROTOCOL_VERSION).
const ProtocolVersion = "v1"

// CreateSubmissionRequest is Spark's CreateSubmissionRequest. The fields are
// declared in Jackson's alphabetic order; nil maps and slices that Spark ≤3.5
// requires are sent as {} and [] (non-null), the optional ones are omitted
// when empty (Jackson's NON_ABSENT).
type CreateSubmissionRequest struct {
	Action               string            `json:"action"`
	AppArgs              []string          `json:"appArgs"`
	AppResource          string            `json:"appResource"`
	ClientSparkVersion   string            `json:"clientSparkVersion"`
	EnvironmentVariables map[string]string `json:"environmentVariables"`
	MainClass            *string           `json:"mainClass,omitempty"`
	SparkProperties      map[string]string `json:"sparkProperties"`
}

// JSON returns the exact bytes sent to /v1/submissions/create, as Spark's
// SubmitRestProtocolMessage.toJson writes them (validated first, as toJson
// does).
func (r *CreateSubmissionRequest) JSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	c := *r
	if c.AppArgs == nil {
		c.AppArgs = []string{}
	}
	if c.EnvironmentVariables == nil {
		c.EnvironmentVariables = map[string]string{}
	}
	return sparkrest.Marshal(&c)
}

// Validate is CreateSubmissionRequest.doValidate as Spark ≤3.5 runs it on
// both sides (fields that must be set, typed properties).
func (r *CreateSubmissionRequest) Validate() error {
	switch {
	case r.Action != "CreateSubmissionRequest":
		return fmt.Errorf("action %q: must be CreateSubmissionRequest", r.Action)
	case r.ClientSparkVersion == "":
		return fmt.Errorf("'clientSparkVersion' is missing in message CreateSubmissionRequest")
	case r.SparkProperties == nil:
		return fmt.Errorf("no Spark properties set")
	case r.AppResource == "":
		return fmt.Errorf("'appResource' is missing in message CreateSubmissionRequest (no primary resource in the spark-submit arguments)")
	case r.SparkProperties["spark.app.name"] == "":
		return fmt.Errorf("property 'spark.app.name' is missing in message CreateSubmissionRequest")
	}
	return nil
}

// Response is any response of the protocol: CreateSubmissionResponse,
// KillSubmissionResponse, SubmissionStatusResponse or ErrorResponse, told
// apart by Action.
type Response struct {
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

	// HTTPStatus and Master are not part of the message: the status code and
	// the REST URL that answered.
	HTTPStatus int    `json:"-"`
	Master     string `json:"-"`
}

// OK reports whether success is true.
func (r *Response) OK() bool { return r.Success != nil && *r.Success }

// parseRestResponse reads a response body as SubmitRestProtocolMessage.fromJson
// and validate() do on the client.
func parseRestResponse(body []byte) (*Response, error) {
	var r Response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("not a REST protocol message: %w", err)
	}
	switch r.Action {
	case "CreateSubmissionResponse", "KillSubmissionResponse", "SubmissionStatusResponse":
		if r.Success == nil {
			return nil, fmt.Errorf("%s without 'success'", r.Action)
		}
	case "ErrorResponse":
		if r.Message == "" {
			return nil, fmt.Errorf("ErrorResponse without 'message'")
		}
	case "":
		return nil, fmt.Errorf("not a REST protocol message: no action")
	default:
		return nil, fmt.Errorf("unexpected message %s from the server", r.Action)
	}
	return &r, nil
}
