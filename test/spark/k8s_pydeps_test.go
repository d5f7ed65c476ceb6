package spark

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/pyindex"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/s3store"
)

// The PySpark journeys of issue 44 ("PySpark's other half") run
// testdata/pydeps/app.py: the driver, and a UDF on the executors, import
// the job's Python dependencies (testdata/pydeps/requirements.txt: tabulate,
// pure Python, and PyYAML with its C extension, a cp311 manylinux wheel),
// and the driver writes and reads Avro (spark-avro from --packages). prebake
// resolves both halves once, through counting proxies in front of Maven
// Central and the machine's Python index (internal/testenv/pyindex); every
// later step (bake, submit, the pods) asks neither.
var (
	pyDepsApp  = filepath.Join("testdata", "pydeps", "app.py")
	pyDepsReqs = filepath.Join("testdata", "pydeps", "requirements.txt")
)

// The target the node's Spark image runs (Debian bookworm's python3 and
// glibc), which prebake resolve is told (it has no image to read it from).
const (
	pyDepsPython   = "3.11"
	pyDepsPlatform = "manylinux_2_36_x86_64"
	avroPackage    = "org.apache.spark:spark-avro_2.12:" + sparkVersion
)

// pyVersions are the pinned versions app.py checks (requirements.txt's).
var pyVersions = map[string]string{"tabulate": "0.9.0", "yaml": "6.0.2"}

// pyProbe is one PYDEPS DRIVER or PYDEPS EXECUTOR line of app.py.
type pyProbe struct {
	Host           string `json:"host"`
	Python         string `json:"python"`
	Tabulate       string `json:"tabulate"`
	TabulateFile   string `json:"tabulate_file"`
	YAML           string `json:"yaml"`
	YAMLFile       string `json:"yaml_file"`
	YAMLNativeFile string `json:"yaml_native_file"`
	LibYAML        bool   `json:"libyaml"`
}

// pyDepsLog reads app.py's output: the driver's probe, the executors',
// and whether it ended with PYDEPS OK (and wrote and read Avro).
type pyDepsLog struct {
	driver    *pyProbe
	executors []pyProbe
	ok, avro  bool
	fails     []string
}

func parsePyDeps(t *testing.T, log string) pyDepsLog {
	t.Helper()
	var out pyDepsLog
	for _, l := range strings.Split(log, "\n") {
		_, rest, found := strings.Cut(l, "PYDEPS ")
		if !found {
			continue
		}
		switch {
		case strings.HasPrefix(rest, "DRIVER "), strings.HasPrefix(rest, "EXECUTOR "):
			kind, doc, _ := strings.Cut(rest, " ")
			var p pyProbe
			if err := json.Unmarshal([]byte(doc), &p); err != nil {
				t.Errorf("a PYDEPS %s line that does not parse: %v: %s", kind, err, l)
				continue
			}
			if kind == "DRIVER" {
				out.driver = &p
			} else {
				out.executors = append(out.executors, p)
			}
		case rest == "OK":
			out.ok = true
		case rest == "AVRO row-0,row-1,row-2":
			out.avro = true
		case strings.HasPrefix(rest, "FAIL"):
			out.fails = append(out.fails, rest)
		}
	}
	return out
}

// check asserts app.py's facts: PYDEPS OK, Avro, the pinned versions and
// the native extension on the driver and on executors, each module loaded
// from a path inPrebake accepts (the image's site-packages, the store's
// archive, the local unpack), and, when remoteExecutors, executors on
// another host than the driver (pods, not the driver's JVM).
func (l pyDepsLog) check(t *testing.T, log string, remoteExecutors bool, inPrebake func(path string) bool) {
	t.Helper()
	if !l.ok || !l.avro || len(l.fails) > 0 || l.driver == nil || len(l.executors) == 0 {
		t.Fatalf("app.py: ok %v, avro %v, driver probe %v, %d executor probes, fails %q:\n%s", l.ok, l.avro, l.driver != nil, len(l.executors), l.fails, log)
	}
	for i, p := range append([]pyProbe{*l.driver}, l.executors...) {
		who := "driver"
		if i > 0 {
			who = "executor"
			if remoteExecutors && p.Host == l.driver.Host {
				t.Errorf("an executor's UDF ran on the driver's host %s, want an executor pod", p.Host)
			}
		}
		if p.Tabulate != pyVersions["tabulate"] || p.YAML != pyVersions["yaml"] || !p.LibYAML || !strings.HasSuffix(p.YAMLNativeFile, ".so") {
			t.Errorf("%s: %+v, want tabulate %s, PyYAML %s with its C extension", who, p, pyVersions["tabulate"], pyVersions["yaml"])
		}
		for _, f := range []string{p.TabulateFile, p.YAMLFile, p.YAMLNativeFile} {
			if !inPrebake(f) {
				t.Errorf("%s imported %s: not where prebake put the wheels", who, f)
			}
		}
		t.Logf("%s on %s (Python %s): tabulate %s, yaml %s", who, p.Host, p.Python, p.TabulateFile, p.YAMLNativeFile)
	}
}

// pyJourney is a journey (namespace, /data, Maven proxy) with a counting
// proxy in front of the machine's Python index on the node's address, the
// test's prebake processes reading only it (PIP_CONFIG_FILE), app.py in
// /data, and one cache and lock that `prebake resolve` fills first.
type pyJourney struct {
	*journey
	index          *pyindex.Index
	cache, lock    string
	reqs           string
	pyAfterResolve int // index requests when prebake resolve ended
	mvAfterResolve int // Maven requests then
}

func newPyJourney(t *testing.T, ns string) *pyJourney {
	t.Helper()
	j := newJourney(t, ns)
	ix := pyindex.Start(t, pyindex.Listen(k8scluster.NodeIP+":0"))
	j.env = append(j.env, ix.Env(t, t.TempDir())...)
	app, err := os.ReadFile(pyDepsApp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(j.data, "app.py"), app, 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, err := filepath.Abs(pyDepsReqs)
	if err != nil {
		t.Fatal(err)
	}
	return &pyJourney{journey: j, index: ix, cache: filepath.Join(j.dir, "cache"), lock: filepath.Join(j.dir, "prebake.lock"), reqs: reqs}
}

// resolve is prebake's own resolve, the only step that may ask an index:
// spark-avro through the Maven proxy and the wheels through the Python one,
// into the journey's cache and lock.
func (j *pyJourney) resolve(t *testing.T) {
	t.Helper()
	j.pyAfterResolve, j.mvAfterResolve = resolvePyDeps(t, j.env, j.index, j.maven, j.cache, j.lock, j.reqs)
}

// resolvePyDeps runs prebake resolve for app.py's two halves and checks
// that it, and only it, asked both proxies; it returns their counts.
func resolvePyDeps(t *testing.T, env []string, ix *pyindex.Index, maven *testenv.Proxy, cache, lockFile, reqs string) (py, mv int) {
	t.Helper()
	r := prebakeWithin(t, env, 5*time.Minute, "resolve", "--cache", cache, "--lock", lockFile,
		"--no-default-repositories", "--repositories", maven.URL, "--packages", avroPackage,
		"--py-requirements", reqs, "--python-version", pyDepsPython, "--python-platform", pyDepsPlatform)
	if r.code != 0 {
		t.Fatalf("prebake resolve: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{"tabulate==" + pyVersions["tabulate"], "pyyaml==" + pyVersions["yaml"], "spark-avro_2.12:" + sparkVersion} {
		if !strings.Contains(strings.ToLower(r.stdout), strings.ToLower(w)) {
			t.Errorf("prebake resolve's tree lacks %s:\n%s", w, r.stdout)
		}
	}
	reqsSeen := ix.Requests()
	kinds := map[pyindex.Kind]int{}
	for _, q := range reqsSeen {
		t.Logf("index: %s %s %s → %d (%s)", q.Kind, q.Method, q.Path[strings.LastIndexByte(strings.TrimSuffix(q.Path, "/"), '/')+1:], q.Status, strings.SplitN(q.UserAgent, " ", 2)[0])
		kinds[q.Kind]++
		// prebake's own client, or the uv it runs to resolve a
		// requirements file's ranges and transitive dependencies (pointed
		// at the same index).
		if !strings.HasPrefix(q.UserAgent, "prebake") && !strings.HasPrefix(q.UserAgent, "uv/") {
			t.Errorf("an index request that is not prebake resolve's: %s", q)
		}
	}
	if kinds[pyindex.Page] == 0 || kinds[pyindex.File] == 0 {
		t.Errorf("prebake resolve asked the index proxy %d pages and %d files, want both (was the proxy bypassed?): %v", kinds[pyindex.Page], kinds[pyindex.File], reqsSeen)
	}
	if maven.Count() == 0 {
		t.Errorf("prebake resolve made no Maven request through %s", maven.URL)
	}
	t.Logf("prebake resolve: %d index requests (%d pages, %d files), %d Maven requests", len(reqsSeen), kinds[pyindex.Page], kinds[pyindex.File], maven.Count())
	return len(reqsSeen), maven.Count()
}

// noIndexAfterResolve checks that nothing asked either proxy after
// prebake resolve (the bakes and submits read the lock and the cache, the
// pods have everything), and that no pod of the namespace, nor its
// ConfigMaps, names an index: the pods could not ask one if they tried.
func (j *pyJourney) noIndexAfterResolve(t *testing.T) {
	t.Helper()
	if extra := j.index.Since(j.pyAfterResolve); len(extra) > 0 {
		for _, q := range extra {
			t.Errorf("an index request after prebake resolve: %s", q)
		}
	}
	if n := j.maven.Count(); n != j.mvAfterResolve {
		t.Errorf("%d Maven requests after prebake resolve: %v", n-j.mvAfterResolve, j.maven.Requests()[j.mvAfterResolve:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := j.c.Client.CoreV1().Pods(j.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := j.c.Client.CoreV1().ConfigMaps(j.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]any{}
	for _, p := range pods.Items {
		docs["pod "+p.Name] = p.Spec
	}
	for _, cm := range cms.Items {
		docs["configmap "+cm.Name] = cm.Data
	}
	for what, v := range docs {
		b, _ := json.Marshal(v)
		for _, s := range append(j.index.Names(), "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE", "UV_INDEX") {
			if strings.Contains(string(b), s) {
				t.Errorf("%s names an index (%q):\n%s", what, s, b)
			}
		}
	}
	t.Logf("index proxy: %d requests, all prebake resolve's; Maven proxy: %d; %d pods and %d ConfigMaps name no index",
		j.index.Count(), j.maven.Count(), len(pods.Items), len(cms.Items))
}

// submitArgs is a `prebake submit -o json` of app.py in cluster mode from
// the journey's lock (--frozen: no resolve), named name: prebake's flags,
// then spark-submit's (the node's conf, the token, the team's image, /data,
// one executor, --packages spark-avro) and conf.
func (j *pyJourney) submitArgs(name string, flags, conf []string) []string {
	// No target flags: submit reads the wheels' target from the argv's
	// image (or the store's lock), as bake image and bake s3 do; it must
	// be the lock's, or --frozen fails.
	args := append([]string{"submit", "-o", "json", "--cache", j.cache, "--lock", j.lock, "--frozen", "--py-requirements", j.reqs,
		"--no-default-repositories", "--repositories", j.maven.URL, "--poll-interval", "2s"}, flags...)
	args = append(append(append(args, "--"), j.c.SparkConf(j.ns)...), "--name", name,
		"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile="+j.tokenFile,
		"--conf", "spark.kubernetes.driver.pod.name="+name+"-driver",
		"--conf", "spark.kubernetes.container.image="+j.image,
		"--conf", "spark.executor.instances=1")
	for _, role := range []string{"driver", "executor"} {
		args = append(args, "--conf", "spark.kubernetes."+role+".volumes.hostPath.data.mount.path=/data",
			"--conf", "spark.kubernetes."+role+".volumes.hostPath.data.options.path="+j.data)
	}
	for _, kv := range conf {
		args = append(args, "--conf", kv)
	}
	return append(args, "--packages", avroPackage, "local:///data/app.py", "/data/"+name+".avro")
}

// checkDriver checks a cluster-mode run of app.py by prebake submit:
// prebake's exit 0 from the driver, then checkPod. It returns the driver pod.
func (j *pyJourney) checkDriver(t *testing.T, r result, name, imagePrefix string, inPrebake func(string) bool) *corev1.Pod {
	t.Helper()
	res := parseResult(t, r)
	if r.code != 0 || res.Source != "driver" || intp(res.DriverExitCode) != "0" {
		_, log := j.driverLog(t, name)
		t.Fatalf("exit %d source %q driverExitCode %s, want 0 from the driver\nstdout:\n%s\nstderr:\n%s\ndriver log:\n%s", r.code, res.Source, intp(res.DriverExitCode), r.stdout, r.stderr, log)
	}
	noIvyWork(t, j.home, r.stderr)
	return j.checkPod(t, name, imagePrefix, inPrebake)
}

// driverLog returns the driver pod name-driver and its log (nil, "" when
// there is none).
func (j *pyJourney) driverLog(t *testing.T, name string) (*corev1.Pod, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod, err := j.c.Client.CoreV1().Pods(j.ns).Get(ctx, name+"-driver", metav1.GetOptions{})
	if err != nil {
		return nil, ""
	}
	b, _ := j.c.Client.CoreV1().Pods(j.ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	return pod, string(b)
}

// checkPod checks the driver pod name-driver of app.py: it succeeded on
// an image starting with imagePrefix, Spark resolved nothing, and app.py's
// facts hold (inPrebake: the modules' paths).
func (j *pyJourney) checkPod(t *testing.T, name, imagePrefix string, inPrebake func(string) bool) *corev1.Pod {
	t.Helper()
	pod, log := j.driverLog(t, name)
	if pod == nil {
		t.Fatalf("no driver pod %s-driver in %s", name, j.ns)
	}
	j.waitPhase(t, pod, corev1.PodSucceeded)
	if img := pod.Spec.Containers[0].Image; !strings.HasPrefix(img, imagePrefix) {
		t.Errorf("driver image %s, want %s…", img, imagePrefix)
	}
	if strings.Contains(log, ":: resolving dependencies ::") || strings.Contains(log, "Ivy Default Cache") {
		t.Errorf("Spark resolved packages in the driver:\n%s", log)
	}
	parsePyDeps(t, log).check(t, log, true, inPrebake)
	return pod
}

// inImage accepts a module under the image's site-packages layer.
func inImage(path string) bool { return strings.HasPrefix(path, layers.DefaultPythonDir+"/") }

// inArchive accepts a module under the store's unpacked archive (its
// alias, a directory of the driver's and executors' working directories).
func inArchive(path string) bool { return strings.Contains(path, "/"+s3store.ArchiveName+"/") }

// TestK8sPyDepsImage (issue 44, the Must's baked-image half): prebake
// resolve, then `prebake bake image` puts spark-avro's jars and the two
// wheels (one site-packages tree on the image's PYTHONPATH) onto the
// team's image, then app.py runs in cluster mode from that image twice:
// through the real spark-submit and through the native submitter (no JVM
// on the host). The driver and the executors' UDF import both packages
// from the image, the driver writes and reads Avro, and after prebake
// resolve neither index had a request.
func TestK8sPyDepsImage(t *testing.T) {
	t.Parallel()
	j := newPyJourney(t, "pydeps-image")
	j.resolve(t)
	target := j.c.Registry + "/spark-jobs-py"
	bake := prebakeWithin(t, j.env, 8*time.Minute, "bake", "image", "--cache", j.cache, "--lock", j.lock, "--frozen",
		"--py-requirements", j.reqs, "--no-default-repositories", "--repositories", j.maven.URL,
		"--base", j.image, "--target", target, "--packages", avroPackage)
	if bake.code != 0 {
		t.Fatalf("prebake bake image: exit %d\nstdout:\n%s\nstderr:\n%s", bake.code, bake.stdout, bake.stderr)
	}
	ref, _, _ := strings.Cut(bake.stdout, "\n")
	t.Logf("baked %s", ref)
	if !strings.HasPrefix(ref, target) {
		t.Errorf("bake image printed %q first, want the image in %s", ref, target)
	}
	for _, sub := range []struct{ name, submitter string }{{"pydeps-spark-submit", "spark-submit"}, {"pydeps-native", "native"}} {
		t.Run(sub.submitter, func(t *testing.T) {
			start := time.Now()
			r := prebakeWithin(t, j.env, 8*time.Minute, j.submitArgs(sub.name, []string{"--image-target", target, "--submitter", sub.submitter}, nil)...)
			pod := j.checkDriver(t, r, sub.name, target, inImage)
			if sub.submitter == "native" && strings.Contains(r.stderr, "org.apache.spark.deploy") {
				t.Errorf("spark-submit ran:\n%s", r.stderr)
			}
			if img := pod.Spec.Containers[0].Image; img != ref {
				t.Errorf("driver image %s, want the one bake image made: %s (the same lock and base)", img, ref)
			}
			t.Logf("%s: %s", sub.submitter, time.Since(start).Round(100*time.Millisecond))
		})
	}
	j.noIndexAfterResolve(t)
}

// TestK8sPyDepsStore (issue 44, the Must's store half): prebake resolve,
// then `prebake bake s3` puts the jars and the wheels' site-packages
// archive into versitygw (behind a counting https proxy on the node's
// address, as TestK8sJourneyStore), then `prebake submit --store` runs
// app.py on the team's image unchanged: the jars by presigned URL, the
// archive as spark.archives …#pydeps on the driver's and executors'
// PYTHONPATH, through the real spark-submit and through the native
// submitter (no JVM on the host). Both import the packages from the
// archive, the driver writes and reads Avro, and after prebake resolve
// neither index had a request.
func TestK8sPyDepsStore(t *testing.T) {
	t.Parallel()
	j := newPyJourney(t, "pydeps-store")
	j.resolve(t)
	st := j.nodeStore(t, "pydeps-store")
	bake := prebakeWithin(t, st.env, 8*time.Minute, append(append([]string{"bake", "s3", "--cache", j.cache, "--lock", j.lock, "--frozen",
		"--py-requirements", j.reqs, "--no-default-repositories", "--repositories", j.maven.URL}, st.flags...), "--packages", avroPackage)...)
	if bake.code != 0 {
		t.Fatalf("prebake bake s3: exit %d\nstdout:\n%s\nstderr:\n%s", bake.code, bake.stdout, bake.stderr)
	}
	for _, sub := range []struct{ name, submitter string }{{"pydeps-store", "spark-submit"}, {"pydeps-store-native", "native"}} {
		t.Run(sub.submitter, func(t *testing.T) {
			start := time.Now()
			flags := append(slices.Clone(st.flags), "--url-style", "presigned", "--expires", "1h", "--submitter", sub.submitter)
			if sub.submitter == "native" {
				// The team's image was not baked by prebake: it records no
				// Spark version, which the native submitter must know.
				flags = append(flags, "--spark-version", k8scluster.NodeSparkVersion)
			}
			r := prebakeWithin(t, st.env, 8*time.Minute, j.submitArgs(sub.name, flags,
				[]string{"spark.driver.extraJavaOptions=" + st.trust, "spark.executor.extraJavaOptions=" + st.trust})...)
			driver := j.checkDriver(t, r, sub.name, j.image, inArchive)
			if sub.submitter == "native" && strings.Contains(r.stderr, "org.apache.spark.deploy") {
				t.Errorf("spark-submit ran:\n%s", r.stderr)
			}
			// The driver downloads spark.archives from the store
			// (presigned); executors get it from the driver, as they get
			// spark.jars. Only this run's requests count.
			var archive []string
			for _, q := range st.proxy.Requests() {
				if q.Method == "GET" && strings.HasSuffix(q.Path, s3store.ArchiveFile) && !q.At.Before(start) {
					who := "host " + q.RemoteIP
					if q.RemoteIP == driver.Status.PodIP {
						who = "driver"
					}
					archive = append(archive, who)
				}
			}
			if !slices.Contains(archive, "driver") {
				t.Errorf("the driver did not fetch the site-packages archive from the store (fetched by %v): %v", archive, st.proxy.Requests())
			}
			t.Logf("%s: the archive fetched from the store by %v; %s", sub.submitter, archive, time.Since(start).Round(100*time.Millisecond))
		})
	}
	j.noIndexAfterResolve(t)
}
