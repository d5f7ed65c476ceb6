package jsondoc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type withDriver struct {
	Backend        string `json:"backend"`
	DriverExitCode *int   `json:"driverExitCode,omitempty"`
	Reason         string `json:"reason,omitempty"`
	Message        string `json:"message,omitempty"`
}

type withoutDriver struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// TestOutcome: exitCode goes before driverExitCode (else reason), source
// before reason, whether or not those are omitted; HTML is left to the
// caller's encoder; the document reads back.
func TestOutcome(t *testing.T) {
	three := 3
	for _, tt := range []struct {
		name string
		v    any
		want string
	}{
		{"driver", Outcome[*withDriver]{3, "driver", &withDriver{Backend: "b", DriverExitCode: &three, Reason: "Error"}},
			`{"backend":"b","exitCode":3,"driverExitCode":3,"source":"driver","reason":"Error"}`},
		{"omitted", Outcome[withDriver]{69, "prebake", withDriver{Backend: "b"}},
			`{"backend":"b","exitCode":69,"source":"prebake"}`},
		{"no driver code", Outcome[withoutDriver]{0, "driver", withoutDriver{State: "FINISHED", Reason: "FINISHED"}},
			`{"state":"FINISHED","exitCode":0,"source":"driver","reason":"FINISHED"}`},
		{"batch", BatchOutcome[*withoutDriver]{2, Outcome[*withoutDriver]{69, "prebake", &withoutDriver{}}},
			`{"line":2,"state":"","exitCode":69,"source":"prebake"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// HTML is left to the encoder that calls MarshalJSON (the CLI's escapes none).
	b, err := (Outcome[*withDriver]{3, "driver", &withDriver{Backend: "b", DriverExitCode: &three, Reason: "Error", Message: "a<b"}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"backend":"b","exitCode":3,"driverExitCode":3,"source":"driver","reason":"Error","message":"a<b"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var back BatchOutcome[*withDriver]
	if err := json.Unmarshal([]byte(`{"line":4,"backend":"b","exitCode":3,"driverExitCode":3,"source":"driver"}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.Line != 4 || back.ExitCode != 3 || back.Source != "driver" || back.Result.Backend != "b" || *back.Result.DriverExitCode != 3 {
		t.Errorf("read back %+v %+v", back, back.Result)
	}
	if _, err := (Outcome[struct{ A int }]{}).JSONShape(); err == nil {
		t.Error("an Outcome of a struct without reason has a shape")
	}
}
