package k8s

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// sparkException is the shape of what a Spark 4.1+ driver writes when its
// main ends with an exception: Utils.exceptionString, the class and message
// first, then the stack.
const sparkException = "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 4 times\n" +
	"\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)\n" +
	"\tat Main$.main(Main.scala:12)\n"

// driverPodAs is a failed driver pod shaped as the Spark line writes it:
// 3.5 and 4.0 leave no account of the failure on the pod; 4.1+ annotate the
// pod with spark.exit-exception (spark.kubernetes.driver.annotateExitException)
// and write the failure to the container's termination log.
func driverPodAs(line string, exc, termination string) *corev1.Pod {
	st := terminated(driverC, 1, "Error")
	st.State.Terminated.Message = termination
	p := podIn(corev1.PodFailed, st)
	if exc != "" {
		p.Annotations = map[string]string{ExitExceptionAnnotation: exc}
	}
	p.Labels["spark-version"] = line
	return p
}

// TestDriverEndPerLine: the failure reason comes from the spark.exit-exception
// annotation (4.1+) and the driver container's termination message, in the
// result's JSON (exitException, terminationMessage) and its one-line
// message; Spark 3.5/4.0 pods, which carry neither, give neither.
func TestDriverEndPerLine(t *testing.T) {
	long := "java.lang.RuntimeException: " + strings.Repeat("x", 2*MaxDriverEnd)
	tests := []struct {
		name, line, exc, term string
		wantExc, wantTerm     string
		wantMsg               string // in Result.Message
	}{
		{name: "3.5: neither", line: "3.5.9"},
		{name: "4.0: neither", line: "4.0.5"},
		{name: "4.1: annotation and termination log", line: "4.1.4", exc: sparkException, term: sparkException,
			wantExc: strings.TrimRight(sparkException, "\n"), wantTerm: strings.TrimRight(sparkException, "\n"),
			wantMsg: "; the driver: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 4 times"},
		{name: "4.3: termination log only (annotation off, its default)", line: "4.3.0", term: "java.lang.IllegalStateException: no input\n",
			wantTerm: "java.lang.IllegalStateException: no input", wantMsg: "; the driver: java.lang.IllegalStateException: no input"},
		{name: "4.2: a secret in the exception is redacted", line: "4.2.1",
			exc:     "java.lang.RuntimeException: cannot open s3a://bucket/x with spark.hadoop.fs.s3a.secret.key=AKIASECRETVALUE1234",
			wantExc: "java.lang.RuntimeException: cannot open s3a://bucket/x with spark.hadoop.fs.s3a.secret.key=xxxxx",
			wantMsg: "secret.key=xxxxx"},
		{name: "4.3: a long exception is bounded", line: "4.3.0", exc: long,
			wantExc: long[:4067] + fmt.Sprintf("… [%d bytes, cut to 4067]", len(long)), wantMsg: "; the driver: java.lang.RuntimeException: xxx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _, _, _ := runWatch(t, watchCase{steps: []step{{pod: driverPodAs(tc.line, tc.exc, tc.term)}}})
			if diff := cmp.Diff([2]string{tc.wantExc, tc.wantTerm}, [2]string{res.ExitException, res.TerminationMessage}); diff != "" {
				t.Errorf("exitException, terminationMessage (-want +got):\n%s", diff)
			}
			if tc.wantMsg != "" && !strings.Contains(res.Message, tc.wantMsg) {
				t.Errorf("message %q lacks %q", res.Message, tc.wantMsg)
			}
			if tc.wantMsg == "" && strings.Contains(res.Message, "the driver:") {
				t.Errorf("message %q names a driver account that the pod lacks", res.Message)
			}
			if strings.Contains(res.Message, "AKIASECRETVALUE1234") || strings.Contains(res.ExitException, "AKIASECRETVALUE1234") {
				t.Errorf("secret in the result: %q / %q", res.Message, res.ExitException)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{"exitException": tc.wantExc, "terminationMessage": tc.wantTerm} {
				got, present := m[key]
				if want == "" && present {
					t.Errorf("JSON has %s=%q, want it omitted", key, got)
				}
				if want != "" && got != want {
					t.Errorf("JSON %s=%q, want %q", key, got, want)
				}
			}
		})
	}
}

// TestDriverEndEvicted: a pod that failed with no driver container status
// (evicted) still reports the exception the driver annotated.
func TestDriverEndEvicted(t *testing.T) {
	p := podIn(corev1.PodFailed)
	p.Status.Reason = "Evicted"
	p.Annotations = map[string]string{ExitExceptionAnnotation: "java.lang.InterruptedException\n\tat x"}
	res, _, _, err := runWatch(t, watchCase{steps: []step{{pod: p}}})
	if err == nil || !strings.Contains(err.Error(), "the driver: java.lang.InterruptedException") {
		t.Errorf("error %v lacks the driver's exception", err)
	}
	if res.ExitException != "java.lang.InterruptedException\n\tat x" {
		t.Errorf("exitException %q", res.ExitException)
	}
}
