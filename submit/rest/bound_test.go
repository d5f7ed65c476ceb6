package rest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/internal/testenv"
)

// TestRestMessagesRedactedAndBounded is audit 4 M2 for REST: a master's
// messages (a driver's exception, a status message) that quote a password
// and a bearer token and run to 200 KB are redacted and bounded in the
// Result, its JSON, the log and Status's DriverState.
func TestRestMessagesRedactedAndBounded(t *testing.T) {
	huge := "java.lang.RuntimeException: password: RESTSECRET7 token Bearer RESTBEARER7 " + strings.Repeat("Z", 200_000)
	secrets := []string{"RESTSECRET7", "RESTBEARER7"}
	fake := sparkresttest.New(sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"},
		sparkresttest.Step{State: "RUNNING", WorkerID: "worker-1", Message: huge}, sparkresttest.Step{State: "FAILED", Exception: huge}))
	addr := fakeMaster(t, fake)
	var log testenv.SyncBuffer
	res := submitREST(context.Background(), submitArgs("spark://"+addr), fastOpts(&log)...)
	if res.Err() == nil {
		t.Fatal("want a failed driver")
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 16<<10 || len(log.String()) > 16<<10 {
		t.Errorf("JSON %d bytes, log %d bytes: want them bounded", len(b), len(log.String()))
	}
	for _, s := range []string{string(b), log.String(), res.Err().Error()} {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("%s in %.300s", secret, s)
			}
		}
	}
	if len(res.Message) > redact.MaxResultMessage {
		t.Errorf("message: %d bytes", len(res.Message))
	}

	id := "driver-20261129101010-0002"
	fake.AddDriver(id, sparkresttest.Step{State: "RUNNING", WorkerID: "worker-9", Message: huge})
	b2, err := New("spark://"+addr, fastOpts(&log)...)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := b2.Status(context.Background(), id)
	if err != nil || len(ss) != 1 {
		t.Fatalf("status: %v %v", err, ss)
	}
	st := ss[0].(DriverState)
	if len(st.Message) > redact.MaxResultMessage || strings.Contains(st.Message, "RESTSECRET7") || !strings.Contains(st.Message, "password: xxxxx") {
		t.Errorf("status message: %d bytes: %.200s", len(st.Message), st.Message)
	}
}
