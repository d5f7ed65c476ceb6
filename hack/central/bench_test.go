package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

// benchSets are the cases whose cold resolution `make bench` times, prebake
// against the real spark-submit, on the machine's Central.
var benchSets = []string{"s35-kafka@3.5", "s35-aws-delta-kafka@3.5", "s40-delta-iceberg", "s40-cassandra"}

// BenchmarkCentralCold resolves each set cold (empty caches) with the real
// spark-submit and with prebake, on the real Central, and reports Spark's
// resolution phase (Ivy's "resolve" + "artifacts dl", as its report prints
// them; the JVM's start is not counted), prebake's whole resolution
// (graph, downloads, lock) and their ratio. Then it resolves again from the
// lock and the cache and fails unless that makes zero requests.
func BenchmarkCentralCold(b *testing.B) {
	testenv.RequireIT(b)
	_, testdata, cases := suite(b)
	byName := map[string]kase{}
	for _, c := range cases {
		byName[c.id()] = c
	}
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range benchSets {
		c, ok := byName[name]
		if !ok {
			b.Fatalf("bench set %s is not a case of cases.txt", name)
		}
		b.Run(name, func(b *testing.B) {
			if _, _, err := sparkHome(c.spark); err != nil {
				testenv.Skip(b, err.Error())
			}
			ctx := context.Background()
			o, err := newOracle(c.spark, central, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			spark, phase, err := o.run(ctx, c, testdata)
			if err != nil {
				b.Fatal(err)
			}
			if spark.failed || phase == 0 {
				b.Fatalf("spark-submit did not resolve %s (phase %v): %s", c.name, phase, spark.detail)
			}
			req := c.request(central, testdata, b.TempDir())
			req.LockPath = filepath.Join(b.TempDir(), "prebake.lock")
			req.Home, req.DefaultArtifactRepository = b.TempDir(), central
			t0 := time.Now()
			res, err := resolver.Resolve(ctx, req)
			cold := time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			got := outcome{jars: map[string]string{}}
			for _, a := range res.Lock.Artifacts {
				got.jars[a.File] = a.Sha256
			}
			if d := compare(spark, got, true); d != "" {
				b.Fatalf("prebake differs from spark-submit:\n%s", d)
			}
			// Warm: the lock and the cache, and not one request.
			ct := &countingTransport{next: http.DefaultTransport}
			t1 := time.Now()
			warm, err := resolver.Resolve(ctx, req, resolver.WithHTTPClient(&http.Client{Transport: ct}))
			warmT := time.Since(t1)
			if err != nil {
				b.Fatal(err)
			}
			if !warm.FromLock || ct.n.Load() != 0 {
				b.Fatalf("warm resolution: from lock %v, %d request(s); want the lock and 0", warm.FromLock, ct.n.Load())
			}
			ratio := phase.Seconds() / cold.Seconds()
			b.ReportMetric(float64(phase.Milliseconds()), "spark-ms")
			b.ReportMetric(float64(cold.Milliseconds()), "prebake-ms")
			b.ReportMetric(ratio, "spark/prebake")
			b.ReportMetric(float64(warmT.Microseconds()), "warm-µs")
			b.ReportMetric(0, "warm-requests")
			b.Logf("%s (%d jars): spark-submit's resolution %v, prebake cold %v (%.1fx), warm %v with 0 requests", c.id(), len(spark.jars), phase, cold.Round(time.Millisecond), ratio, warmT.Round(time.Microsecond))
		})
	}
}
