package k8s

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/k8senv"
)

// TestK8sAttachIT: submit --status-poll-only follows a driver submitted
// elsewhere to its end on a real kube-apiserver and never runs spark-submit
// (issue 16: the flag used to submit a second job on k8s://).
func TestK8sAttachIT(t *testing.T) {
	e := newITEnv(t)
	ns := "it-attach"
	first := filepath.Join(t.TempDir(), "argv-first")
	wait := e.kubeletScript(t, ns, func(pod string) {
		e.k.RunToEnd(t, ns, pod, []string{"INFO SparkContext: Running Spark version 3.5.3"},
			k8senv.PhaseWith(corev1.PodFailed, terminated(driverC, 3, "Error")))
	})
	r := e.submit(t, itRun{ns: ns, env: []string{"FAKE_SPARK_SUBMIT_ARGV=" + first}})
	wait()
	checkResult(t, r, itWant{endExit(3), "Error", "Failed"})

	// The library: the same end, from the pod alone.
	run := itRun{ns: ns, tokenFile: filepath.Join(t.TempDir(), "token")}
	testenv.WriteFile(t, run.tokenFile, e.c.BoundToken(t, e.saNS, e.saName, "tok-attach-again"))
	e.fill(t, &run)
	again := filepath.Join(t.TempDir(), "argv-again")
	var stdout, stderr testenv.SyncBuffer
	o := options{sparkSubmit: e.fakeSub, pollInterval: 200 * time.Millisecond, notFoundGrace: time.Second,
		environ: slices.Concat(hostEnviron(), []string{"FAKE_SPARK_SUBMIT_ARGV=" + again}, mapEnv(map[string]string{"HOME": t.TempDir()})),
		stderr:  &stderr, inClusterDir: e.saDir}
	res, err := attachWith(t.Context(), ns+":"+r.res.Pod, mustLoad(t, e.args(run), o.environ), use(o))
	checkResult(t, itResult{res, err, stdout.String(), stderr.String()}, itWant{endExit(3), "Error", "Failed"})
	if _, serr := os.Stat(again); serr == nil {
		t.Errorf("AttachK8s ran spark-submit")
	}

	// A pod that is not there: 66 after the grace, nothing submitted.
	res, err = attachWith(t.Context(), ns+":no-such-driver", mustLoad(t, e.args(run), o.environ), use(o))
	if errdefs.KindOf(err) != errdefs.NotFound || res.Reason != reasonNotFound {
		t.Errorf("missing pod: kind %v reason %q err %v", errdefs.KindOf(err), res.Reason, err)
	}
	if _, serr := os.Stat(again); serr == nil {
		t.Errorf("AttachK8s ran spark-submit for a missing pod")
	}

	// The CLI: --status-poll-only on k8s:// never submits, with or without
	// --deploy-mode (client mode used to run spark-submit and exit 0).
	for _, mode := range []string{"cluster", "client"} {
		cmd := e.cli(t, run)
		for i, a := range cmd.Args {
			if a == "submit" {
				cmd.Args = append(cmd.Args[:i+1], append([]string{"--status-poll-only", ns + ":" + r.res.Pod, "-o", "json"}, cmd.Args[i+1:]...)...)
				break
			}
		}
		for i, a := range cmd.Args {
			if a == "--deploy-mode" {
				cmd.Args[i+1] = mode
			}
		}
		cmd.Env = append(cmd.Env, "FAKE_SPARK_SUBMIT_ARGV="+again)
		err := cmd.Run()
		out := cmd.Stdout.(*testenv.SyncBuffer).String()
		if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(out, `"submissionId":"`+ns+":"+r.res.Pod+`"`) {
			t.Errorf("%s: CLI attach exit %d (%v)\nstdout:\n%s\nstderr:\n%s", mode, code, err, out, cmd.Stderr.(*testenv.SyncBuffer).String())
		}
		if _, serr := os.Stat(again); serr == nil {
			t.Errorf("%s: prebake submit --status-poll-only ran spark-submit", mode)
		}
	}
}
