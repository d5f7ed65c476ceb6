package rest

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
)

// BenchmarkRestSubmitHA measures a whole submit → poll → FINISHED run
// against the fake master over 127.0.0.1, directly and with a standby
// master listed first (HA), and reports the HA cost as a ratio.
func BenchmarkRestSubmitHA(b *testing.B) {
	serve := func(s *sparkresttest.Server) string {
		srv := httptest.NewServer(s)
		b.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	script := sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"}, sparkresttest.Step{State: "RUNNING"}, sparkresttest.Step{State: "FINISHED"})
	alive := serve(sparkresttest.New(script))
	standby := serve(sparkresttest.New(script, sparkresttest.WithStandby()))
	run := func(master string, n int) time.Duration {
		start := time.Now()
		for range n {
			res := submitREST(context.Background(), submitArgs(master),
				WithPollInterval(time.Millisecond), WithRetry(2, time.Millisecond, 3))
			if res.Err() != nil {
				b.Fatalf("kind %v: %v", errdefs.KindOf(res.Err()), res.Err())
			}
		}
		return time.Since(start) / time.Duration(n)
	}
	const n = 50
	direct := run("spark://"+alive, n)
	ha := run("spark://"+standby+","+alive, n)
	b.ReportMetric(float64(direct.Microseconds()), "us/direct-run")
	b.ReportMetric(float64(ha.Microseconds()), "us/ha-run")
	b.ReportMetric(float64(ha)/float64(direct), "ha/direct")
}
