package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/submit/k8s"
)

// TestRenderSubmitted: a K8s run that did not wait (the user's
// waitAppCompletion=false) prints exit 0 from prebake, not the driver.
func TestRenderSubmitted(t *testing.T) {
	r := &k8s.Result{Backend: "k8s", SubmissionID: "ns:app-driver", Namespace: "ns", Pod: "app-driver", Phase: k8s.PhaseSubmitted}
	var out bytes.Buffer
	if err := (&k8sAdapter{}).Render(&run{out: outJSON, stdout: &out, stderr: io.Discard}, r, nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		SubmissionID, Phase, Source string
		ExitCode                    int
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	want := got
	want.SubmissionID, want.Phase, want.Source, want.ExitCode = "ns:app-driver", "Submitted", "prebake", 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
