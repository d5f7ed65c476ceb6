package benchpy

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/pypi"
)

// The set and its target: pandas and pyarrow (numpy, python-dateutil,
// tzdata and six come as their dependencies) for CPython 3.11 on glibc
// 2.36 x86_64, the target of the Spark images. PREBAKE_BENCH_PY_SET
// changes the set (space-separated requirements).
const (
	pyVersion  = "3.11"
	pyPlatform = "manylinux_2_36_x86_64"
	uvPlatform = "x86_64-manylinux_2_36"
)

// The goals of issue 44's Speed Must.
const (
	coldGoal  = 1.1  // prebake cold ÷ uv pip install --target, medians
	warmGoal  = 50.0 // ms of a warm resolve over a process start
	layerGoal = 1.3  // Python layer bake ÷ read + write + hash floor
)

// state is what the cold row leaves for the warm and layer rows: the
// requirements, the lock and the cache of prebake's last cold run.
type state struct {
	bin, req, lock, cache string
	dir                   string // the benchmark's, kept across its rows
}

// BenchmarkPythonSet times, side by side in one run, on the machine's
// index (its pip configuration; the same for uv, given as uv's options):
//
//   - cold: prebake resolve of the set (uv pip compile, the index pages,
//     the wheels fetched into an empty cache, the lock written) against uv
//     pip install --target of the same set with an empty uv cache (resolve,
//     fetch, unpack), runs alternated (PREBAKE_BENCH_PY_RUNS, default 3);
//     cold_ratio is the ratio of the medians (goal <= 1.1); both must give
//     the same projects at the same versions;
//   - warm: prebake resolve --frozen from that lock and cache, minus a
//     prebake --version (process start), medians of 7 interleaved runs
//     (goal <= 50 ms), with the index reached only through a counting
//     proxy (HTTPS_PROXY) that must see no connection; then, with an empty
//     cache, the same command must pass through it (the count works);
//   - layer: the bake of the set's wheels into one Python layer (a whole
//     layers.Bake into a new OCI layout, no layer cache, compression none
//     and gzip) against the floor measured in the same rounds: reading every
//     wheel's bytes, writing the installed tree's files (inflated before,
//     untimed) and one sha256 over the bytes written; and against a
//     stricter floor, the same bytes written into one file (floor1: no file
//     created per member, as a tar); sitepkgs.Stage (the staged install
//     the store's archive uses) beside them. Goal: bake none <= 1.3 x the floor, medians
//     of 5 interleaved rounds (PREBAKE_BENCH_PY_ROUNDS).
func BenchmarkPythonSet(b *testing.B) {
	testenv.RequireIT(b)
	st := &state{bin: testenv.Prebake(b)}
	st.dir = b.TempDir()
	st.req = filepath.Join(st.dir, "requirements.txt")
	set := strings.Fields(os.Getenv("PREBAKE_BENCH_PY_SET"))
	if len(set) == 0 {
		set = []string{"pandas", "pyarrow"}
	}
	if err := os.WriteFile(st.req, []byte(strings.Join(set, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("cold", func(b *testing.B) { benchCold(b, st, set) })
	b.Run("warm", func(b *testing.B) { benchWarm(b, st) })
	b.Run("layer", func(b *testing.B) { benchLayer(b, st) })
}

// resolveArgs are prebake resolve's arguments for the set.
func (st *state) resolveArgs(lockPath, cacheDir string, extra ...string) []string {
	return append([]string{"resolve", "--py-requirements", st.req, "--python-version", pyVersion,
		"--python-platform", pyPlatform, "--lock", lockPath, "--cache", cacheDir, "-o", "names"}, extra...)
}

// baseEnv is the environment without uv's variables and without proxies,
// plus kv.
func baseEnv(kv ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "UV_") || strings.EqualFold(k, "https_proxy") || strings.EqualFold(k, "http_proxy") || strings.EqualFold(k, "no_proxy") {
			continue
		}
		env = append(env, e)
	}
	return append(env, kv...)
}

// run runs bin args with env and returns its wall and CPU time.
func run(b *testing.B, env []string, bin string, args ...string) (wall, cpu time.Duration) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	wall = time.Since(t0)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.Bytes())
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
		return n
	}
	return def
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func benchCold(b *testing.B, st *state, set []string) {
	ctx := context.Background()
	uv, err := pypi.FindUV(os.LookupEnv)
	if err != nil {
		testenv.Skip(b, err.Error())
	}
	cfg, err := pypi.LoadIndexConfig(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// uv reads no pip configuration: the machine's indexes, find-links and
	// certificate are given to it, as prebake gives them to uv pip compile.
	uvEnv := []string{"UV_PYTHON_DOWNLOADS=never", "UV_NO_PROGRESS=1"}
	uvArgs := []string{"pip", "install", "-q", "--no-config", "--python-version", pyVersion, "--python-platform", uvPlatform, "--only-binary", ":all:"}
	if cfg.NoIndex {
		uvArgs = append(uvArgs, "--no-index")
	} else {
		uvEnv = append(uvEnv, "UV_DEFAULT_INDEX="+cfg.IndexURL)
		if len(cfg.ExtraIndexURLs) > 0 {
			uvEnv = append(uvEnv, "UV_INDEX="+strings.Join(cfg.ExtraIndexURLs, " "))
		}
	}
	for _, fl := range cfg.FindLinks {
		uvArgs = append(uvArgs, "--find-links", fl)
	}
	if cfg.Cert != "" {
		uvEnv = append(uvEnv, "SSL_CERT_FILE="+cfg.Cert)
	}
	runs := envInt("PREBAKE_BENCH_PY_RUNS", 3)
	for b.Loop() {
		var pre, uvs, preCPU, uvCPU []time.Duration
		var want, got []string
		for i := range runs {
			dir, err := os.MkdirTemp(st.dir, "cold-")
			if err != nil {
				b.Fatal(err)
			}
			cacheDir, lockPath, target := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock"), filepath.Join(dir, "target")
			prebake := func() {
				// uv pip compile's own cache (XDG_CACHE_HOME) starts empty too.
				w, c := run(b, baseEnv("XDG_CACHE_HOME="+filepath.Join(dir, "xdg")), st.bin, st.resolveArgs(lockPath, cacheDir)...)
				pre, preCPU = append(pre, w), append(preCPU, c)
			}
			uvRun := func() {
				env := baseEnv(append(uvEnv, "UV_CACHE_DIR="+filepath.Join(dir, "uv-cache"))...)
				w, c := run(b, env, uv, append(slices.Clone(uvArgs), append([]string{"--target", target}, set...)...)...)
				uvs, uvCPU = append(uvs, w), append(uvCPU, c)
			}
			if i%2 == 0 {
				prebake()
				uvRun()
			} else {
				uvRun()
				prebake()
			}
			got, want = lockedSet(b, lockPath), installedSet(b, target)
			if !slices.Equal(got, want) {
				b.Fatalf("prebake locked %v, uv installed %v", got, want)
			}
			if st.lock != "" {
				os.RemoveAll(filepath.Dir(st.lock)) // the previous run's; this one's stays for warm and layer
			}
			st.lock, st.cache = lockPath, cacheDir
			os.RemoveAll(target)
			os.RemoveAll(filepath.Join(dir, "uv-cache"))
		}
		ratio := median(pre).Seconds() / median(uvs).Seconds()
		b.ReportMetric(float64(len(got)), "wheels")
		b.ReportMetric(ms(median(pre)), "prebake_ms")
		b.ReportMetric(ms(median(uvs)), "uv_ms")
		b.ReportMetric(ratio, "prebake/uv")
		b.ReportMetric(median(preCPU).Seconds()/median(uvCPU).Seconds(), "prebake/uv_cpu")
		b.Logf("cold, %d runs each, alternated: prebake resolve %v (CPU %v), uv pip install --target %v (CPU %v): %.2fx (goal <= %.1f): %s",
			runs, median(pre).Round(time.Millisecond), median(preCPU).Round(time.Millisecond), median(uvs).Round(time.Millisecond), median(uvCPU).Round(time.Millisecond), ratio, coldGoal, strings.Join(got, " "))
	}
}

// lockedSet is the lock's wheels as name==version, sorted.
func lockedSet(b *testing.B, lockPath string) []string {
	lf, err := lock.Read(lockPath)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, w := range lf.Wheels() {
		out = append(out, lock.NormalizeProject(w.Name)+"=="+w.Version)
	}
	slices.Sort(out)
	return out
}

// installedSet is the projects a --target directory holds (its
// .dist-info directories) as name==version, sorted.
func installedSet(b *testing.B, target string) []string {
	ents, err := os.ReadDir(target)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".dist-info"); ok && e.IsDir() {
			name, version, _ := strings.Cut(n, "-")
			out = append(out, lock.NormalizeProject(name)+"=="+strings.ToLower(version))
		}
	}
	slices.Sort(out)
	return out
}

// ensure makes the lock and cache of a cold run when the cold row was not
// run (-bench filtered it out).
func (st *state) ensure(b *testing.B) {
	if st.lock != "" {
		return
	}
	st.lock, st.cache = filepath.Join(st.dir, "prebake.lock"), filepath.Join(st.dir, "cache")
	run(b, baseEnv(), st.bin, st.resolveArgs(st.lock, st.cache)...)
}

func benchWarm(b *testing.B, st *state) {
	st.ensure(b)
	px := startConnectProxy(b)
	env := baseEnv("HTTPS_PROXY="+px.url, "HTTP_PROXY="+px.url, "NO_PROXY=")
	before, err := os.ReadFile(st.lock)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		const rounds = 7
		var start, warm []time.Duration
		for range rounds {
			w, _ := run(b, env, st.bin, "--version")
			start = append(start, w)
			w, _ = run(b, env, st.bin, st.resolveArgs(st.lock, st.cache, "--frozen")...)
			warm = append(warm, w)
		}
		if n := px.n.Load(); n != 0 {
			b.Fatalf("warm resolve: %d connection(s) through the proxy; want 0", n)
		}
		if after, err := os.ReadFile(st.lock); err != nil || !bytes.Equal(after, before) {
			b.Fatalf("warm resolve rewrote the lock (%v)", err)
		}
		// The count works: with an empty cache the same command fetches
		// the lock's wheels through the proxy.
		run(b, env, st.bin, st.resolveArgs(st.lock, filepath.Join(b.TempDir(), "cache"), "--frozen")...)
		seen := px.n.Load()
		if seen == 0 {
			b.Fatal("a resolve with an empty cache made no connection through the proxy: the count does not see the index")
		}
		over := median(warm) - median(start)
		b.ReportMetric(ms(median(warm)), "warm_ms")
		b.ReportMetric(ms(median(start)), "start_ms")
		b.ReportMetric(ms(over), "warm-start_ms")
		b.ReportMetric(0, "warm_requests")
		b.Logf("warm, %d runs: prebake resolve --frozen %v, prebake --version %v: %v over the process start (goal <= %v ms), 0 connections to the index (%d with an empty cache)",
			rounds, median(warm).Round(time.Microsecond*100), median(start).Round(time.Microsecond*100), over.Round(time.Microsecond*100), warmGoal, seen)
	}
}

// connectProxy is an HTTP proxy that tunnels CONNECT requests (and refuses
// plain ones), counting both.
type connectProxy struct {
	url string
	n   atomic.Int64
}

func startConnectProxy(b *testing.B) *connectProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p := &connectProxy{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.n.Add(1)
		if r.Method != http.MethodConnect {
			http.Error(w, "tunnels only", http.StatusForbidden)
			return
		}
		up, err := net.DialTimeout("tcp", r.Host, 10*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			up.Close()
			http.Error(w, "no hijack", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		conn, rw, err := hj.Hijack()
		if err != nil {
			up.Close()
			return
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); io.Copy(up, rw); up.(*net.TCPConn).CloseWrite() }()
		go func() { defer wg.Done(); io.Copy(conn, up); conn.Close() }()
		wg.Wait()
		up.Close()
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return p
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck // RUSAGE_SELF does not fail
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// member is one file of a wheel's installed tree, inflated.
type member struct {
	name string
	data []byte
}

// inflate reads every file of the wheels (the floor's output, untimed).
func inflate(b *testing.B, paths []string) []member {
	var out []member
	for _, p := range paths {
		zr, err := zip.OpenReader(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, "/") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				b.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, member{name: f.Name, data: data})
		}
		zr.Close()
	}
	return out
}

// readAll reads every file of paths to its end (the floors' read of the
// wheels).
func readAll(b *testing.B, paths []string) {
	buf := make([]byte, 1<<20)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, f, buf); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// floor reads every wheel's bytes, writes the members under root (their
// directories made once) and hashes the bytes written with one sha256.
func floor(b *testing.B, paths []string, members []member, root string) {
	readAll(b, paths)
	h := sha256.New()
	dirs := map[string]bool{}
	for _, m := range members {
		p := filepath.Join(root, filepath.FromSlash(m.name))
		if d := path.Dir(m.name); !dirs[d] {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			dirs[d] = true
		}
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(m.data); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		h.Write(m.data)
	}
	h.Sum(nil)
}

// floorStream is floor with the members' bytes written one after the
// other into one file (as a tar's bytes are), no file created per member:
// the stricter floor.
func floorStream(b *testing.B, paths []string, members []member, out string) {
	readAll(b, paths)
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.New()
	for _, m := range members {
		if _, err := f.Write(m.data); err != nil {
			b.Fatal(err)
		}
		h.Write(m.data)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	h.Sum(nil)
}

func benchLayer(b *testing.B, st *state) {
	st.ensure(b)
	ctx := context.Background()
	lf, err := lock.Read(st.lock)
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	var wheelBytes int64
	for _, w := range lf.Wheels() {
		paths = append(paths, cache.BlobPath(st.cache, w.Sha256))
		wheelBytes += w.Size
	}
	members := inflate(b, paths)
	var treeBytes int64
	for _, m := range members {
		treeBytes += int64(len(m.data))
	}
	ws, err := sitepkgs.WheelsOf(lf, paths)
	if err != nil {
		b.Fatal(err)
	}
	base := "oci:" + filepath.Join("..", "..", "testdata", "base-image") + ":3.5.0-amd64"
	digests := map[layers.Compression]string{}
	rounds := envInt("PREBAKE_BENCH_PY_ROUNDS", 5)
	for b.Loop() {
		times, cpus := map[string][]time.Duration{}, map[string][]time.Duration{}
		timed := func(name string, f func()) {
			c, s := cpuTime(), time.Now()
			f()
			times[name] = append(times[name], time.Since(s))
			cpus[name] = append(cpus[name], cpuTime()-c)
		}
		var pyLayer layers.LayerInfo
		for range rounds {
			tmp := b.TempDir()
			timed("floor", func() { floor(b, paths, members, filepath.Join(tmp, "floor")) })
			os.RemoveAll(filepath.Join(tmp, "floor"))
			timed("floor1", func() { floorStream(b, paths, members, filepath.Join(tmp, "floor1")) })
			os.Remove(filepath.Join(tmp, "floor1"))
			staging := filepath.Join(tmp, "staging")
			os.Mkdir(staging, 0o755)
			timed("stage", func() {
				if _, err := sitepkgs.Stage(ctx, ws, staging, layers.DefaultEpoch); err != nil {
					b.Fatal(err)
				}
			})
			os.RemoveAll(staging)
			for _, c := range []layers.Compression{layers.CompressionNone, layers.CompressionGzip} {
				out, lc := filepath.Join(tmp, "out-"+string(c)), filepath.Join(tmp, "cache-"+string(c))
				timed("bake_"+string(c), func() {
					res, err := layers.Bake(ctx, layers.BakeInput{Lock: lf, Wheels: lock.LocalJars(paths), Base: base, Target: "oci:" + out},
						layers.WithCompression(c), layers.WithCacheDir(lc))
					if err != nil {
						b.Fatal(err)
					}
					py := res.Layers[len(res.Layers)-1]
					if py.Role != layers.RolePython {
						b.Fatalf("last layer %+v, want the python layer", py)
					}
					if d, ok := digests[c]; ok && d != py.Digest {
						b.Fatalf("%s: python layer %s, then %s: not reproducible", c, d, py.Digest)
					}
					digests[c] = py.Digest
					if c == layers.CompressionNone {
						pyLayer = py
					}
				})
				os.RemoveAll(out)
				os.RemoveAll(lc)
			}
			os.RemoveAll(tmp)
		}
		med := func(n string) float64 { return median(times[n]).Seconds() }
		cpu := func(n string) float64 { return median(cpus[n]).Seconds() }
		b.ReportMetric(float64(wheelBytes)/1e6, "wheel_MB")
		b.ReportMetric(float64(treeBytes)/1e6, "tree_MB")
		b.ReportMetric(float64(len(members)), "files")
		b.ReportMetric(med("floor")*1e3, "floor_ms")
		b.ReportMetric(med("stage")*1e3, "stage_ms")
		b.ReportMetric(med("bake_none")*1e3, "bake_none_ms")
		b.ReportMetric(med("bake_gzip")*1e3, "bake_gzip_ms")
		b.ReportMetric(med("stage")/med("floor"), "stage/floor")
		b.ReportMetric(med("bake_none")/med("floor"), "bake_none/floor")
		b.ReportMetric(med("bake_gzip")/med("floor"), "bake_gzip/floor")
		b.ReportMetric(cpu("bake_none")/cpu("floor"), "bake_none/floor_cpu")
		b.ReportMetric(med("floor1")*1e3, "floor1_ms")
		b.ReportMetric(med("bake_none")/med("floor1"), "bake_none/floor1")
		b.ReportMetric(cpu("bake_none")/cpu("floor1"), "bake_none/floor1_cpu")
		if la, err := os.ReadFile("/proc/loadavg"); err == nil {
			var l1 float64
			fmt.Sscan(string(la), &l1)
			b.ReportMetric(l1, "load1")
		}
		b.Logf("layer, %d rounds: %d wheels (%.1f MB), %d files (%.1f MB): floor %v (tree of files; one file: %v), stage %v, bake none %v (%.2fx the floor, %.2fx the one-file floor; CPU %.2fx, %.2fx; goal <= %.1f), gzip %v (%.2fx); python layer %s",
			rounds, len(paths), float64(wheelBytes)/1e6, len(members), float64(treeBytes)/1e6, median(times["floor"]).Round(time.Millisecond), median(times["floor1"]).Round(time.Millisecond),
			median(times["stage"]).Round(time.Millisecond), median(times["bake_none"]).Round(time.Millisecond), med("bake_none")/med("floor"), med("bake_none")/med("floor1"),
			cpu("bake_none")/cpu("floor"), cpu("bake_none")/cpu("floor1"), layerGoal,
			median(times["bake_gzip"]).Round(time.Millisecond), med("bake_gzip")/med("floor"), pyLayer.Digest)
	}
}
