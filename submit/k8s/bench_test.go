package k8s

import (
	"fmt"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv/k8senv"
	corev1 "k8s.io/api/core/v1"
)

// BenchmarkK8sDetection measures, against the real API server, how long
// prebake takes to report a driver's end after its container terminated
// (as a ratio of --poll-interval), and how many API requests it makes per
// poll of a running driver (pod Get, driver log, executor list).
func BenchmarkK8sDetection(b *testing.B) {
	e := newITEnv(b)
	const poll = 500 * time.Millisecond
	const runs = 4
	var total time.Duration
	var gets, reqs int
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := 0; i < runs; i++ {
			ns := fmt.Sprintf("bench-%d-%d", n, i)
			p := k8senv.StartFaultProxy(b, e.c, nil)
			var ended time.Time
			var runGets, runReqs int
			wait := e.kubeletScript(b, ns, func(pod string) {
				e.k.RunToEnd(b, ns, pod, []string{"INFO SparkContext: Running Spark version 3.5.3"}, nil)
				g0, t0 := p.Counts()
				time.Sleep(5 * poll)
				g1, t1 := p.Counts()
				runGets, runReqs = g1-g0, t1-t0
				ended = time.Now()
				e.k.SetStatus(b, ns, pod, k8senv.PhaseWith(corev1.PodSucceeded, terminated(driverC, 0, "Completed")))
			})
			r := e.submit(b, itRun{ns: ns, master: p.URL, caFile: p.CAFile, opts: func(o *options) { o.pollInterval = poll }})
			done := time.Now()
			wait()
			if r.err != nil {
				b.Fatalf("run %d: %v\n%s", i, r.err, r.stderr)
			}
			total += done.Sub(ended)
			gets += runGets
			reqs += runReqs
		}
	}
	b.StopTimer()
	mean := total / time.Duration(b.N*runs)
	b.ReportMetric(float64(mean.Milliseconds()), "ms/detect")
	b.ReportMetric(float64(mean)/float64(poll), "detect/poll-interval")
	b.ReportMetric(float64(reqs)/float64(gets), "api-requests/poll")
}
