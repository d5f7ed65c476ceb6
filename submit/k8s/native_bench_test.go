package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/k8senv"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

// procStats is one process's cost.
type procStats struct {
	cpu   time.Duration // user + system
	rss   int64         // peak, KiB
	toPod time.Duration // from the start to the driver pod's POST
	wall  time.Duration
}

// podPosts timestamps the first driver pod POST per namespace.
type podPosts struct {
	mu sync.Mutex
	at map[string]time.Time
}

var podPostPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods$`)

func (p *podPosts) record(method, path string, _ []byte) {
	if m := podPostPath.FindStringSubmatch(path); m != nil && method == "POST" {
		p.mu.Lock()
		if _, ok := p.at[m[1]]; !ok {
			p.at[m[1]] = time.Now()
		}
		p.mu.Unlock()
	}
}

func (p *podPosts) get(ns string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at[ns]
}

func runMeasured(b *testing.B, cmd *exec.Cmd, posts *podPosts, ns string) procStats {
	b.Helper()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", cmd.Path, err, out)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := procStats{wall: wall}
	if ru != nil {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.rss = ru.Maxrss
	}
	if at := posts.get(ns); !at.IsZero() {
		s.toPod = at.Sub(start)
	}
	return s
}

func benchEnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkNativeVsSparkSubmit submits the same cluster-mode argv, side by
// side in one run against the real kube-apiserver, with the real
// spark-submit (waitAppCompletion=false) and with `prebake submit
// --submitter native` (a fake kubelet ends each driver at once, so the
// prebake process also polls to the end). Per submission: CPU seconds,
// wall time to the pod's creation, peak RSS; and sequential throughput
// (PREBAKE_BENCH_NATIVE_N native submissions, default 200;
// PREBAKE_BENCH_SPARK_N spark-submit ones, default 5, each several seconds).
func BenchmarkNativeVsSparkSubmit(b *testing.B) {
	e := k8senv.NewEquiv(b)
	posts := &podPosts{at: map[string]time.Time{}}
	e.Proxy.OnWrite(posts.record)
	k := k8senv.StartKubelet(b, e.C)
	version := testenv.SparkVersions[0]
	home, _ := testenv.SparkHome(b, version)
	sub := filepath.Join(home, "bin", "spark-submit")
	ie := &itEnv{}
	prebake := ie.prebake(b)
	nSpark, nNative := benchEnvInt("PREBAKE_BENCH_SPARK_N", 5), benchEnvInt("PREBAKE_BENCH_NATIVE_N", 200)
	argv := func(ns string) []string {
		return nativetest.Expand(append(nativetest.CommonArgs(ns, version),
			"--conf", "spark.kubernetes.driver.label.team=data", "--class", "org.example.Main", "local:///opt/app.jar", "arg"), e.Repl)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var spark, nat []procStats
		sparkStart := time.Now()
		for i := 0; i < nSpark; i++ {
			ns := fmt.Sprintf("bench-s-%d-%d", n, i)
			e.C.EnsureNamespace(b, ns)
			cmd := exec.Command(sub, argv(ns)...)
			cmd.Env = e.SparkSubmitEnv(b, home, nil)
			spark = append(spark, runMeasured(b, cmd, posts, ns))
		}
		sparkElapsed := time.Since(sparkStart)
		nativeStart := time.Now()
		for i := 0; i < nNative; i++ {
			ns := fmt.Sprintf("bench-n-%d-%d", n, i)
			e.C.EnsureNamespace(b, ns)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if pod := k.WaitPod(b, ns); pod != "" {
					k.SetStatus(b, ns, pod, k8senv.PhaseWith(corev1.PodSucceeded, terminated(driverC, 0, "Completed")))
				}
			}()
			cmd := exec.Command(prebake, append([]string{"--quiet", "submit", "--submitter", "native", "--spark-version", version,
				"--poll-interval", "100ms", "--"}, argv(ns)...)...)
			cmd.Env = []string{"HOME=" + b.TempDir(), "KUBECONFIG=", "SPARK_HOME=", "SPARK_USER=prebake", "PATH=" + os.Getenv("PATH")}
			nat = append(nat, runMeasured(b, cmd, posts, ns))
			<-done
		}
		nativeElapsed := time.Since(nativeStart)
		b.StopTimer()
		sCPU, sPod, sRSS := mean(spark)
		nCPU, nPod, nRSS := mean(nat)
		b.ReportMetric(sCPU.Seconds(), "spark-submit-cpu-s/sub")
		b.ReportMetric(nCPU.Seconds(), "native-cpu-s/sub")
		b.ReportMetric(sCPU.Seconds()/nCPU.Seconds(), "cpu-ratio")
		b.ReportMetric(float64(sPod.Milliseconds()), "spark-submit-ms-to-pod")
		b.ReportMetric(float64(nPod.Milliseconds()), "native-ms-to-pod")
		b.ReportMetric(float64(sRSS)/1024, "spark-submit-peak-rss-MiB")
		b.ReportMetric(float64(nRSS)/1024, "native-peak-rss-MiB")
		b.ReportMetric(float64(nSpark)/sparkElapsed.Minutes(), "spark-submit-subs/min")
		b.ReportMetric(float64(nNative)/nativeElapsed.Minutes(), "native-subs/min")
		b.Logf("spark-submit %s (%d runs): cpu %s, to pod %s, peak RSS %d MiB; prebake native (%d runs): cpu %s, to pod %s, peak RSS %d MiB",
			version, nSpark, sCPU, sPod, sRSS/1024, nNative, nCPU, nPod, nRSS/1024)
		b.StartTimer()
	}
}

func mean(s []procStats) (cpu, toPod time.Duration, rss int64) {
	for _, x := range s {
		cpu += x.cpu
		toPod += x.toPod
		rss = max(rss, x.rss)
	}
	n := time.Duration(max(len(s), 1))
	return cpu / n, toPod / n, rss
}
