package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/s3store/s3test"
)

// realisticSet is a set shaped like a Spark job's --packages closure: one
// big shaded jar, a few mid-sized ones and many small ones.
func realisticSet(seed uint64, big int64) []s3test.Jar {
	jars := []s3test.Jar{{Name: "aws-java-sdk-bundle", Size: big}, {Name: "hadoop-aws", Size: 900 << 10}}
	for i := range 4 {
		jars = append(jars, s3test.Jar{Name: fmt.Sprintf("mid%d", i), Size: int64(3+i) << 20})
	}
	for i := range 20 {
		jars = append(jars, s3test.Jar{Name: fmt.Sprintf("small%d-%d", seed, i), Size: int64(20+i*15) << 10})
	}
	return jars
}

type fixtureSet struct {
	lf    *lock.File
	paths []string
}

func warmFixtures(t testing.TB, n int, big int64) ([]SetSpec, resolveFunc, int64) {
	dir := t.TempDir()
	byName := map[string]fixtureSet{}
	var specs []SetSpec
	var total int64
	for i := range n {
		// Every set shares the big jar and hadoop-aws (same seed), as real sets do.
		lockShared, pathsShared := s3test.Fixture(t, dir, 100, realisticSet(100, big)[:2]...)
		lockOwn, pathsOwn := s3test.Fixture(t, dir, uint64(i), realisticSet(uint64(i), big)[2:]...)
		lf := &lock.File{Artifacts: append(append([]lock.Artifact{}, lockShared.Artifacts...), lockOwn.Artifacts...)}
		byPath := map[string]string{}
		for k, a := range lockShared.Artifacts {
			byPath[a.File] = pathsShared[k]
		}
		for k, a := range lockOwn.Artifacts {
			byPath[a.File] = pathsOwn[k]
		}
		lf.Normalize()
		var paths []string
		for _, a := range lf.Artifacts {
			paths = append(paths, byPath[a.File])
		}
		name := fmt.Sprintf("set%d", i)
		byName[name] = fixtureSet{lf, paths}
		specs = append(specs, SetSpec{Name: name, Packages: []string{"x"}})
	}
	seen := map[string]bool{}
	for _, fs := range byName {
		for _, a := range fs.lf.Artifacts {
			if !seen[a.Sha256] {
				seen[a.Sha256] = true
				total += a.Size
			}
		}
	}
	resolve := func(_ context.Context, s SetSpec) (setFiles, error) {
		fs := byName[s.Name]
		return setFiles{lock: fs.lf, jars: lock.LocalJars(fs.paths)}, nil
	}
	return specs, resolve, total
}

func TestITWarmSecondRunSendsNothing(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t, "warm")
	proxy := srv.NewProxy(t)
	specs, resolve, total := warmFixtures(t, 3, 20<<20)
	st := s3test.Open(t, proxy.URL, bucket, s3store.WithConcurrency(4))
	ctx := context.Background()
	res, err := warm(ctx, st, specs, 2, nil, resolve)
	if err != nil {
		t.Fatal(err)
	}
	var sent int64
	for _, r := range res {
		sent += r.BytesSent
	}
	// Each distinct jar went up once (plus three small manifests).
	if sent < total || sent > total+64<<10 {
		t.Errorf("first warm sent %d bytes of jars+manifests, want %d distinct jar bytes (+ manifests)", sent, total)
	}
	if got := proxy.BodyBytes.Load(); got < total {
		t.Errorf("proxy saw %d body bytes, want at least %d", got, total)
	}
	proxy.Reset()
	res, err = warm(ctx, st, specs, 2, nil, resolve)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Hit {
			t.Errorf("second warm: set %s not a hit", r.Name)
		}
	}
	if got := proxy.BodyBytes.Load(); got != 0 {
		t.Errorf("second warm sent %d body bytes, want 0", got)
	}
	// Per set: the manifest's GET and the empty PUT of its use marker.
	if got, want := proxy.Requests(http.MethodGet), len(specs); got != want || proxy.Requests(http.MethodPut) != want || proxy.Requests(http.MethodHead) != 0 {
		t.Errorf("second warm: %d GET, %d PUT, %d HEAD; want %d GET and as many empty PUTs", got, proxy.Requests(http.MethodPut), proxy.Requests(http.MethodHead), want)
	}
}

// BenchmarkS3Upload measures upload throughput of a realistic set (one
// 150 MB shaded jar, four 3–6 MB jars, twenty small ones: ~175 MB) to
// loopback versitygw, then the warm path, which must send zero body bytes.
func BenchmarkS3Upload(b *testing.B) {
	srv := s3test.Start(b)
	proxy := srv.NewProxy(b)
	specs, resolve, total := warmFixtures(b, 1, 150<<20)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bucket := srv.Bucket(b, fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i))
		st := s3test.Open(b, srv.Endpoint, bucket) // direct: the proxy would cost throughput
		start := time.Now()
		if _, err := warm(ctx, st, specs, 2, nil, resolve); err != nil {
			b.Fatal(err)
		}
		cold := time.Since(start)
		st = s3test.Open(b, proxy.URL, bucket) // through the counting proxy
		proxy.Reset()
		start = time.Now()
		if _, err := warm(ctx, st, specs, 2, nil, resolve); err != nil {
			b.Fatal(err)
		}
		warm := time.Since(start)
		if n := proxy.BodyBytes.Load(); n != 0 {
			b.Fatalf("warm path sent %d body bytes, want 0", n)
		}
		b.ReportMetric(float64(total)/1e6/cold.Seconds(), "upload-MB/s")
		b.ReportMetric(float64(total)/1e6, "set-MB")
		b.ReportMetric(float64(warm.Microseconds())/1000, "warm-ms")
		b.ReportMetric(cold.Seconds()/warm.Seconds(), "cold/warm")
		b.ReportMetric(0, "warm-body-bytes")
	}
}
