package layers

import (
	"archive/zip"
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/klauspost/compress/gzip"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers/registrytest"
	"github.com/prebake/prebake/lock"
)

// jarLike returns a real jar (a deflated zip) of about size bytes whose
// entries look like class files and resources: jar bytes are mostly
// incompressible, as in a real jar.
func jarLike(seed uint64, size int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"java/lang/Object", "org/apache/spark/", "Code", "LineNumberTable", "scala/collection/", "<init>", "()V", "Ljava/lang/String;", "StackMapTable", "SourceFile"}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; buf.Len() < size; i++ {
		w, _ := zw.Create(fmt.Sprintf("org/example/C%05d.class", i))
		var e bytes.Buffer
		for e.Len() < 16<<10 {
			if r.IntN(3) == 0 {
				var b [8]byte
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				e.Write(b[:])
			} else {
				e.WriteString(words[r.IntN(len(words))])
			}
		}
		w.Write(e.Bytes())
	}
	zw.Close()
	return buf.Bytes()
}

// benchJars writes n jars of size bytes into dir and returns the bake input.
func benchJars(b *testing.B, dir string, n, size int) ([]File, [][]byte) {
	var files []File
	var datas [][]byte
	for i := range n {
		data := jarLike(uint64(i), size)
		p := filepath.Join(dir, fmt.Sprintf("lib%02d.jar", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		f, err := FileFromPath("/opt/spark/prebake/jars/"+filepath.Base(p), p, 0o644, "")
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
		datas = append(datas, data)
	}
	return files, datas
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func best(reps int, f func()) time.Duration {
	var min time.Duration
	for i := 0; i < reps; i++ {
		s := time.Now()
		f()
		if d := time.Since(s); i == 0 || d < min {
			min = d
		}
	}
	return min
}

// BenchmarkCompressor compares the candidate layer compressors on jar
// bytes: klauspost/compress gzip level 1 (the pinned one) and compress/gzip
// levels 1 and 6 (the default).
func BenchmarkCompressor(b *testing.B) {
	_, datas := benchJars(b, b.TempDir(), 8, 4<<20)
	data := bytes.Join(datas, nil)
	mb := float64(len(data)) / 1e6
	for _, c := range []struct {
		name string
		new  func(io.Writer) io.WriteCloser
	}{
		{"klauspost-L1", func(w io.Writer) io.WriteCloser { z, _ := gzip.NewWriterLevel(w, 1); return z }},
		{"stdlib-L1", func(w io.Writer) io.WriteCloser { z, _ := stdgzip.NewWriterLevel(w, 1); return z }},
		{"stdlib-L6", func(w io.Writer) io.WriteCloser { z, _ := stdgzip.NewWriterLevel(w, 6); return z }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out countWriter
			for b.Loop() {
				d := best(3, func() {
					out = countWriter{}
					z := c.new(&out)
					z.Write(data)
					z.Close()
				})
				b.ReportMetric(mb/d.Seconds(), "MB/s")
				b.ReportMetric(float64(out.n)/float64(len(data)), "size_ratio")
			}
		})
	}
}

// BenchmarkBakeLayer measures, on 128 MB of cached jars, against the
// baseline of sha256 plus the pinned compressor over the same bytes in
// memory, one after the other:
//
//   - layer: building the layer alone — reading the jars, tar, sha256 of the
//     tar (diffID), the pinned gzip, sha256 of the blob (digest) and writing
//     the blob file, in one pipelined pass (overhead_ratio);
//   - e2e: a whole Bake into a new OCI layout with no cache: the same pass
//     into a temporary directory, then the blob copied into the layout
//     (e2e_ratio); the budget of both is <= 1.2;
//   - rebake: a whole Bake into a new OCI layout with a warm layer cache (the
//     blob is reused, verified and copied; rebake_ratio).
//
// The four are interleaved, 7 rounds, so they see the same load; the ratios
// are of the best times (the _med ratios of the medians). load1 is the
// 1-minute load average when the measurement ends (2 cores).
func BenchmarkBakeLayer(b *testing.B) {
	dir := b.TempDir()
	files, datas := benchJars(b, dir, 32, 4<<20)
	entries, err := tarEntries(files)
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Join(datas, nil)
	lf := &lock.File{}
	var paths []string
	for i, d := range datas {
		sum := sha256.Sum256(d)
		lf.Artifacts = append(lf.Artifacts, lock.Artifact{Coord: fmt.Sprintf("g:lib%02d:1", i), File: fmt.Sprintf("g_lib%02d-1.jar", i), Sha256: hex.EncodeToString(sum[:]), Size: int64(len(d))})
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("lib%02d.jar", i)))
	}
	ctx := context.Background()
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	cache := b.TempDir()
	var outs []string // removed after each round, untimed
	bake := func(opts ...Option) *Result {
		out := filepath.Join(b.TempDir(), "out")
		outs = append(outs, out)
		res, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + out}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	want := bake(WithCacheDir(cache)) // warms the layer cache
	for b.Loop() {
		const rounds = 7
		var base, layer, e2e, rebake, baseCPU, layerCPU []time.Duration
		timed := func(ds, cpus *[]time.Duration, f func()) {
			c, s := cpuTime(), time.Now()
			f()
			*ds = append(*ds, time.Since(s))
			if cpus != nil {
				*cpus = append(*cpus, cpuTime()-c)
			}
		}
		for range rounds {
			timed(&base, &baseCPU, func() {
				sha256.Sum256(data)
				z, _ := gzip.NewWriterLevel(io.Discard, compressionLevel)
				z.Write(data)
				z.Close()
			})
			tmp := b.TempDir()
			outs = append(outs, tmp)
			timed(&layer, &layerCPU, func() {
				m, _, err := writeLayerBlob(ctx, entries, DefaultEpoch, CompressionGzip, tmp, nopTask{})
				if err != nil {
					b.Fatal(err)
				}
				if m.size == 0 {
					b.Fatal("empty blob")
				}
			})
			timed(&e2e, nil, func() {
				if res := bake(); res.Digest != want.Digest {
					b.Fatalf("digest %s, cached bake %s", res.Digest, want.Digest)
				}
			})
			timed(&rebake, nil, func() { bake(WithCacheDir(cache)) })
			for _, o := range outs {
				os.RemoveAll(o)
			}
			outs = outs[:0]
		}
		for _, ds := range [][]time.Duration{base, layer, e2e, rebake, baseCPU, layerCPU} {
			slices.Sort(ds)
		}
		med := func(ds []time.Duration) float64 { return ds[len(ds)/2].Seconds() }
		low := func(ds []time.Duration) float64 { return ds[0].Seconds() }
		b.ReportMetric(float64(len(data))/1e6, "MB")
		b.ReportMetric(low(base)*1e3, "baseline_ms")
		b.ReportMetric(low(layer)*1e3, "layer_ms")
		b.ReportMetric(low(e2e)*1e3, "e2e_ms")
		b.ReportMetric(low(layer)/low(base), "overhead_ratio")
		b.ReportMetric(low(e2e)/low(base), "e2e_ratio")
		b.ReportMetric(low(rebake)/low(base), "rebake_ratio")
		b.ReportMetric(med(layer)/med(base), "overhead_ratio_med")
		b.ReportMetric(med(e2e)/med(base), "e2e_ratio_med")
		b.ReportMetric(med(layerCPU)/med(baseCPU), "cpu_ratio")
		if la, err := os.ReadFile("/proc/loadavg"); err == nil {
			var l1 float64
			fmt.Sscan(string(la), &l1)
			b.ReportMetric(l1, "load1")
		}
	}
}

// BenchmarkCacheHit measures a cache hit with a lock: registry requests
// (without the auth handshake) and wall time, against the real registry
// under PREBAKE_IT=1.
func BenchmarkCacheHit(b *testing.B) {
	var host string
	if testenv.Integration() {
		host = startRegistry(b, false).Repo("") // HOST/PREFIX: the bench's repositories
	} else {
		host = registrytest.InProcess(b)
	}
	b.Setenv("DOCKER_CONFIG", b.TempDir())
	ctx := context.Background()
	baseRef := host + "/spark:3.5.0"
	if _, err := BuildImage(ctx, sparkBaseSpec(b, baseRef, sparkJars, "linux/amd64")); err != nil {
		b.Fatal(err)
	}
	lf, paths := makeLock(b, b.TempDir(), demoArtifacts...)
	in := BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: baseRef, Target: host + "/jobs"}
	if _, err := Bake(ctx, in); err != nil {
		b.Fatal(err)
	}
	in.Jars = noFetch(b)
	for b.Loop() {
		var res *Result
		d := best(5, func() {
			var err error
			if res, err = Bake(ctx, in); err != nil || !res.CacheHit {
				b.Fatalf("cache hit: %v %v", res, err)
			}
		})
		b.ReportMetric(float64(res.Requests), "requests")
		b.ReportMetric(d.Seconds()*1e3, "hit_ms")
	}
}

// BenchmarkCompression measures each layer compression on 128 MB of jar-like
// jars (32 × 4 MB) side by side, in one run, with the reference: sha256sum
// (coreutils, a separate process) over the same jar files, and one sha256
// pass in Go over the same files read from disk (read + hash). For each of
// none, gzip and zstd:
//
//   - <c>_layer: the layer alone (read, tar, hash(es), compress, write the
//     blob file);
//   - <c>_bake: a whole Bake into a new OCI layout, the jars read from a
//     resolver cache where they are stamped (read once, not hashed again),
//     the layer cache emptied before each (the layer, the blob linked into
//     the layout, the base, the manifest);
//
// reported as ratios to sha256sum (_vs_sha256sum) and to Go's sha256 pass
// (_vs_sha256) of the best of 7 interleaved rounds (_med: of the medians),
// the same ratios of the median CPU time (user + system; _cpu_vs_: what a
// loaded machine does not distort, and a pipeline's second thread does not
// hide), and <c>_size_ratio (blob bytes / tar bytes). The target for
// none_bake is <= 1.3 x one sha256 pass.
func BenchmarkCompression(b *testing.B) {
	sha256sum := testenv.Binary(b, "sha256sum", "")
	dir := b.TempDir()
	_, datas := benchJars(b, dir, 32, 4<<20)
	// The bake reads the jars from a resolver cache, as prebake does: blobs
	// stamped when they were verified, so they are read once, not hashed.
	cache := b.TempDir()
	lf := &lock.File{}
	var paths []string
	var total int64
	for i, d := range datas {
		sum := sha256.Sum256(d)
		a := lock.Artifact{Coord: fmt.Sprintf("g:lib%02d:1", i), File: fmt.Sprintf("g_lib%02d-1.jar", i), Sha256: hex.EncodeToString(sum[:]), Size: int64(len(d))}
		lf.Artifacts = append(lf.Artifacts, a)
		p := blobcache.BlobPath(cache, a.Sha256)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Rename(filepath.Join(dir, fmt.Sprintf("lib%02d.jar", i)), p); err != nil {
			b.Fatal(err)
		}
		if err := blobcache.VerifyBlob(cache, a.Sha256, a.Size); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		total += int64(len(d))
	}
	datas = nil
	var files []File
	for i, p := range paths {
		f, err := FileFromPath(DefaultJarsDir+"/"+lf.Artifacts[i].File, p, 0o644, "")
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
	}
	entries, err := tarEntries(files)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	digests := map[Compression]string{}
	for b.Loop() {
		const rounds = 7
		times, cpus := map[string][]time.Duration{}, map[string][]time.Duration{}
		sizes := map[Compression]int64{}
		var tarSize int64
		var childCPU time.Duration // sha256sum's, set by its run
		timed := func(name string, f func()) {
			c, s := cpuTime(), time.Now()
			childCPU = 0
			f()
			times[name] = append(times[name], time.Since(s))
			cpus[name] = append(cpus[name], cpuTime()-c+childCPU)
		}
		for range rounds {
			timed("sha256sum", func() {
				cmd := exec.Command(sha256sum, paths...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("sha256sum: %v: %s", err, out)
				}
				childCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			})
			timed("sha256", func() {
				buf := make([]byte, 1<<20)
				for _, p := range paths {
					f, err := os.Open(p)
					if err != nil {
						b.Fatal(err)
					}
					h := sha256.New()
					if _, err := io.CopyBuffer(h, f, buf); err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			})
			for _, c := range Compressions {
				tmp := b.TempDir()
				timed(string(c)+"_layer", func() {
					m, _, err := writeLayerBlob(ctx, entries, DefaultEpoch, c, tmp, nopTask{})
					if err != nil {
						b.Fatal(err)
					}
					sizes[c] = m.size
					if c == CompressionNone {
						tarSize = m.size
					}
				})
				os.RemoveAll(tmp)
				out := filepath.Join(b.TempDir(), "out")
				timed(string(c)+"_bake", func() {
					res, err := Bake(ctx, BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + out}, WithCompression(c), WithCacheDir(cache), WithJarOpener(blobcache.JarOpener(cache)))
					if err != nil {
						b.Fatal(err)
					}
					if d, ok := digests[c]; ok && d != res.Digest {
						b.Fatalf("%s: digest %s, then %s: not reproducible", c, d, res.Digest)
					}
					digests[c] = res.Digest
				})
				os.RemoveAll(out)
				os.RemoveAll(filepath.Join(cache, "layers")) // no layer cache hit next round
			}
		}
		low, med, cpu := map[string]float64{}, map[string]float64{}, map[string]float64{}
		for n, ds := range times {
			slices.Sort(ds)
			low[n], med[n] = ds[0].Seconds(), ds[len(ds)/2].Seconds()
			slices.Sort(cpus[n])
			cpu[n] = cpus[n][len(cpus[n])/2].Seconds()
		}
		b.ReportMetric(float64(total)/1e6, "MB")
		b.ReportMetric(low["sha256sum"]*1e3, "sha256sum_ms")
		b.ReportMetric(low["sha256"]*1e3, "sha256_ms")
		for _, c := range Compressions {
			for _, k := range []string{"_layer", "_bake"} {
				n := string(c) + k
				b.ReportMetric(low[n]*1e3, n+"_ms")
				b.ReportMetric(low[n]/low["sha256sum"], n+"_vs_sha256sum")
				b.ReportMetric(low[n]/low["sha256"], n+"_vs_sha256")
				b.ReportMetric(med[n]/med["sha256"], n+"_vs_sha256_med")
				b.ReportMetric(cpu[n]/cpu["sha256"], n+"_cpu_vs_sha256")
				b.ReportMetric(cpu[n]/cpu["sha256sum"], n+"_cpu_vs_sha256sum")
			}
			b.ReportMetric(float64(sizes[c])/float64(tarSize), string(c)+"_size_ratio")
		}
		if la, err := os.ReadFile("/proc/loadavg"); err == nil {
			var l1 float64
			fmt.Sscan(string(la), &l1)
			b.ReportMetric(l1, "load1")
		}
	}
}
