package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store/s3test"
)

// startJobController runs the real kube-controller-manager with the Job
// controller only, against c; it stops in t.Cleanup (before the cluster).
func startJobController(t testing.TB, c *testCluster) {
	t.Helper()
	bin := k8sBinary(t, "kube-controller-manager")
	kc := filepath.Join(c.dir, "kcm.kubeconfig")
	c.writeKubeconfig(t, kc)
	cmd := startProc(t, c.dir, "kube-controller-manager", bin,
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--controllers=job", "--leader-elect=false", "--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(testenv.FreePort(t)), "--v=1")
	t.Cleanup(func() { stopProc(t, cmd) })
}

// exampleWarmJob reads examples/warm-job.yaml: its ServiceAccount and Job.
func exampleWarmJob(t testing.TB) (*corev1.ServiceAccount, *batchv1.Job) {
	t.Helper()
	data, err := os.ReadFile("../../examples/warm-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("warm-job.yaml: %d documents, want 2 (ServiceAccount, Job)", len(docs))
	}
	sa, job := &corev1.ServiceAccount{}, &batchv1.Job{}
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(docs[0]), 4096).Decode(sa); err != nil {
		t.Fatal(err)
	}
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(docs[1]), 4096).Decode(job); err != nil {
		t.Fatal(err)
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("warm-job.yaml: not an Indexed Job")
	}
	return sa, job
}

// warmJobFor is the example Job with n completions, its shard argument
// made i/n, the store and repository given, and nothing else changed.
func warmJobFor(t testing.TB, job *batchv1.Job, n int, store string, extra ...string) *batchv1.Job {
	t.Helper()
	j := job.DeepCopy()
	j.Spec.Completions, j.Spec.Parallelism = ptr(int32(n)), ptr(int32(n))
	if m := j.Spec.MaxFailedIndexes; m != nil && *m > int32(n) {
		j.Spec.MaxFailedIndexes = ptr(int32(n)) // the API's bound: <= completions
	}
	c := &j.Spec.Template.Spec.Containers[0]
	var args []string
	shard := false
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--shard="):
			want := fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", *job.Spec.Completions)
			if a != want {
				t.Fatalf("warm-job.yaml: shard argument %q, want %q (N = completions)", a, want)
			}
			a, shard = fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", n), true
		case strings.HasPrefix(a, "--store="):
			a = "--store=" + store
		case strings.HasPrefix(a, "--region="):
			if strings.HasPrefix(store, "file:") {
				continue
			}
		}
		args = append(args, a)
	}
	if !shard {
		t.Fatal("warm-job.yaml: no --shard argument")
	}
	c.Args = append(args, extra...)
	return j
}

// corpusSets returns n package sets of one module each from
// ../shared/corpus/repo-debian (every module with a jar, in path order,
// that resolves there).
func corpusSets(t testing.TB, repoDir string, n int) []string {
	t.Helper()
	repoDir, err := filepath.Abs(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	var coords []string
	filepath.WalkDir(repoDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pom") {
			return nil
		}
		if _, err := os.Stat(strings.TrimSuffix(p, ".pom") + ".jar"); err != nil {
			return nil
		}
		rel, _ := filepath.Rel(repoDir, filepath.Dir(p))
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) < 3 {
			return nil
		}
		v, a := parts[len(parts)-1], parts[len(parts)-2]
		coords = append(coords, strings.Join(parts[:len(parts)-2], ".")+":"+a+":"+v)
		return nil
	})
	sort.Strings(coords)
	cache := t.TempDir()
	var out []string
	var firstErr error
	for _, c := range coords {
		_, err := resolver.Resolve(context.Background(), resolver.Request{Packages: []string{c}, Repositories: []string{"file://" + repoDir + "/"},
			NoDefaultRepositories: true, CacheDir: cache})
		if err == nil {
			out = append(out, c)
		} else if firstErr == nil {
			firstErr = err
		}
		if len(out) == n {
			return out
		}
	}
	t.Fatalf("only %d of %d corpus modules resolve (of %d; first error: %v)", len(out), n, len(coords), firstErr)
	return nil
}

func setsYAML(coords []string) string {
	var b strings.Builder
	b.WriteString("sets:\n")
	for i, c := range coords {
		fmt.Fprintf(&b, "  - name: s%03d\n    packages: [%q]\n", i, c)
	}
	return b.String()
}

// warmRun is one run of the warm Job.
type warmRun struct {
	took          time.Duration
	requests      int64 // to the repository
	storeRequests int   // to the S3 store (through the counting proxy)
	exits         []podExit
	job           *batchv1.Job
}

// runWarmJob creates the ServiceAccount, the sets ConfigMap and job in a
// new namespace, runs its pods as prebake processes and waits for the Job
// controller to mark it Complete.
func runWarmJob(t testing.TB, c *testCluster, k *testKubelet, bin, ns string, sa *corev1.ServiceAccount, job *batchv1.Job, sets string, srv *mavenhttp.Server, env []string, kill func(*corev1.Pod) int) warmRun {
	t.Helper()
	ctx := context.Background()
	c.ensureNamespace(t, ns)
	if _, err := c.admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The example's ConfigMap (see its comment): the sets file and the lock
	// examples/sets.yaml pins; the generated sets do not use the lock.
	etl, err := os.ReadFile("../../examples/locks/etl.lock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "prebake-sets"}, Data: map[string]string{"sets.yaml": sets, "etl.lock": string(etl)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pk := startProcKubelet(t, k, ns, bin, append([]string{"PREBAKE_CACHE=", "NO_COLOR=1"}, env...), kill)
	srv.Reset()
	start := time.Now()
	if _, err := c.admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		j, err := c.admin.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cond := range j.Status.Conditions {
			if cond.Status != corev1.ConditionTrue {
				continue
			}
			switch cond.Type {
			case batchv1.JobComplete:
				return warmRun{took: time.Since(start), requests: srv.Requests(), exits: pk.finished(), job: j}
			case batchv1.JobFailed:
				t.Fatalf("job %s/%s failed: %s: %s\npods: %+v\n%s", ns, job.Name, cond.Reason, cond.Message, pk.finished(), k.dump(ns))
			}
		}
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("job %s/%s not complete after 10 min: %+v\n%s", ns, job.Name, j.Status, k.dump(ns))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// dump is every log line the kubelet holds for ns (for a failure message).
func (k *testKubelet) dump(ns string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var keys []string
	for key := range k.logs {
		if strings.HasPrefix(key, ns+"/") {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, key := range keys {
		for _, e := range lastN(k.logs[key], 20) {
			fmt.Fprintf(&b, "%s: %s\n", key, e.text)
		}
	}
	return b.String()
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// storeState checks a file:// store: the set manifests (each a complete
// JSON manifest whose jars are all in the store with their size) and no
// temporary or partial file anywhere.
func storeState(t testing.TB, dir string) (sets int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("store: %v", err)
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("store holds a temporary file %s", p)
		}
		return nil
	})
	manifests, _ := filepath.Glob(filepath.Join(dir, "sets", "*.json"))
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var man struct {
			Jars []struct {
				Path string `json:"path"`
				Size int64  `json:"size"`
			} `json:"jars"`
		}
		if err := json.NewDecoder(bytes.NewReader(data)).Decode(&man); err != nil || len(man.Jars) == 0 {
			t.Errorf("manifest %s: %v (%d jars)", m, err, len(man.Jars))
			continue
		}
		for _, j := range man.Jars {
			st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(j.Path)))
			if err != nil || st.Size() != j.Size {
				t.Errorf("manifest %s: jar %s: %v (size %v, want %d)", filepath.Base(m), j.Path, err, st, j.Size)
			}
		}
	}
	return len(manifests)
}

// TestITWarmIndexedJob runs examples/warm-job.yaml on a real Job controller
// (kube-controller-manager) and kube-apiserver, the test kubelet running
// each indexed pod as a `prebake warm` process: 200 package sets from the
// corpus, served over HTTP (the server counts requests), into a file://
// store; once with 1 completion, once with 8, where the kubelet kills
// shard 3's first pod with SIGKILL mid-run (exit 137) and the Job's
// backoffLimitPerIndex retries it, and with 8 and no kill (for the 1 vs 8
// figures). The same twice more into versitygw (S3,
// through a counting proxy). Each time the Job completes, every set's
// manifest is in the store once, complete (its jars there at their size),
// and nothing partial is left (no temporary file, no multipart upload).
func TestITWarmIndexedJob(t *testing.T) {
	warmJobScenario(t, []string{"file", "s3"}, true)
}

// BenchmarkWarmJob: the warm Job of TestITWarmIndexedJob into a file://
// store, 1 shard vs 8 (no kill): wall time of each and their ratio, and the
// repository requests of each and their ratio.
func BenchmarkWarmJob(b *testing.B) {
	for b.Loop() {
		runs := warmJobScenario(b, []string{"file"}, false)
		one, eight := runs[warmKey{"file", 1, false}], runs[warmKey{"file", 8, false}]
		b.ReportMetric(one.took.Seconds(), "wall_1_s")
		b.ReportMetric(eight.took.Seconds(), "wall_8_s")
		b.ReportMetric(one.took.Seconds()/eight.took.Seconds(), "speedup_1/8")
		b.ReportMetric(float64(one.requests), "repo_requests_1")
		b.ReportMetric(float64(eight.requests), "repo_requests_8")
		b.ReportMetric(float64(eight.requests)/float64(one.requests), "repo_requests_8/1")
	}
}

// warmKey names one run of warmJobScenario.
type warmKey struct {
	store string
	n     int
	kill  bool
}

// warmJobScenario runs the warm Job into each store ("file", "s3") with 1
// and 8 shards, and with 8 and a kill when kill is set, checking each run.
func warmJobScenario(t testing.TB, stores []string, kill bool) map[warmKey]warmRun {
	testenv.RequireIT(t)
	const nSets = 200
	repoDir := filepath.Join(testenv.SharedDir(t, "../.."), "corpus", "repo-debian")
	// A private control plane: the Job controller (kube-controller-manager)
	// would act on every test's objects.
	c := startCluster(t)
	startJobController(t, c)
	k := startKubelet(t, c)
	bin := buildPrebakeOnce(t)
	sets := setsYAML(corpusSets(t, repoDir, nSets))
	srv := mavenhttp.New(repoDir, mavenhttp.WithDelay(20*time.Millisecond))
	defer srv.Close()
	sa, example := exampleWarmJob(t)
	repoArgs := []string{"--no-default-repositories", "--repositories=" + srv.URL()}

	var s3srv *s3test.Server
	var proxy *s3test.Proxy
	if slices.Contains(stores, "s3") {
		s3srv = s3test.Start(t)
		proxy = s3srv.NewProxy(t)
	}
	s3env := []string{"AWS_ACCESS_KEY_ID=" + s3test.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s3test.SecretKey, "AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}

	type key = warmKey
	runs := map[key]warmRun{}
	specs := []struct {
		n    int
		kill bool
	}{{1, false}, {8, false}}
	if kill {
		specs = append(specs, struct {
			n    int
			kill bool
		}{8, true})
	}
	for _, store := range stores {
		for _, run := range specs {
			n := run.n
			name := fmt.Sprintf("warm-%s-%d", store, n)
			if run.kill {
				name += "-kill"
			}
			var storeURL, storeDir, bucket string
			args := repoArgs
			var env []string
			if store == "file" {
				storeDir = t.TempDir()
				storeURL = "file://" + storeDir
			} else {
				bucket = s3srv.Bucket(t, name)
				storeURL, storeDir = "s3://"+bucket+"/prebake", s3srv.ObjectPath(bucket, "prebake")
				args = append(append([]string(nil), repoArgs...), "--endpoint="+proxy.URL, "--path-style")
				env = s3env
			}
			job := warmJobFor(t, example, n, storeURL, args...)
			if store == "s3" {
				for i, a := range job.Spec.Template.Spec.Containers[0].Args {
					if strings.HasPrefix(a, "--region=") {
						job.Spec.Template.Spec.Containers[0].Args[i] = "--region=us-east-1" // versitygw's
					}
				}
			}
			var kill func(*corev1.Pod) int
			if run.kill {
				// Shard 3's first pod dies with SIGKILL once it has
				// reported 5 of its 25 sets (its 6th stderr line).
				var killedOnce sync.Once
				kill = func(p *corev1.Pod) int {
					after := 0
					if p.Annotations["batch.kubernetes.io/job-completion-index"] == "3" {
						killedOnce.Do(func() { after = 6 })
					}
					return after
				}
			}
			if proxy != nil {
				proxy.Reset()
			}
			r := runWarmJob(t, c, k, bin, name, sa, job, sets, srv, env, kill)
			if store == "s3" {
				r.storeRequests = proxy.Requests(http.MethodGet) + proxy.Requests(http.MethodHead) + proxy.Requests(http.MethodPut) + proxy.Requests(http.MethodPost)
				if mp := s3srv.MultipartUploads(t, bucket); len(mp) != 0 {
					t.Errorf("%s: multipart uploads left: %v", name, mp)
				}
			}
			runs[key{store, n, run.kill}] = r
			hashes := map[string]bool{}
			names := map[string]int{}
			for _, e := range r.exits {
				if e.Code != 0 {
					continue
				}
				var out struct {
					Sets []struct{ Name, LockHash string }
				}
				if err := json.Unmarshal(e.Stdout, &out); err != nil {
					t.Fatalf("%s: pod %s: -o json output: %v\n%s", name, e.Pod, err, e.Stdout)
				}
				for _, s := range out.Sets {
					names[s.Name]++
					hashes[s.LockHash] = true
					if _, err := os.Stat(filepath.Join(storeDir, "sets", s.LockHash+".json")); err != nil {
						t.Errorf("%s: set %s: manifest: %v", name, s.Name, err)
					}
				}
			}
			for i := range nSets {
				if c := names[fmt.Sprintf("s%03d", i)]; c != 1 {
					t.Errorf("%s: set s%03d done by %d successful pods, want 1", name, i, c)
				}
			}
			if got := storeState(t, storeDir); got != len(hashes) {
				t.Errorf("%s: %d set manifests in the store, want one per lock hash (%d; %d sets)", name, got, len(hashes), nSets)
			}
			if r.job.Status.Succeeded != int32(n) {
				t.Errorf("%s: %d succeeded indexes", name, r.job.Status.Succeeded)
			}
			byIndex := map[string][]podExit{}
			for _, e := range r.exits {
				byIndex[e.Index] = append(byIndex[e.Index], e)
			}
			if len(byIndex) != n {
				t.Errorf("%s: pods ran for %d indexes: %+v", name, len(byIndex), r.exits)
			}
			if run.kill {
				e3 := byIndex["3"]
				if len(e3) != 2 || e3[0].Code != 137 || e3[1].Code != 0 {
					t.Errorf("%s: shard 3: %+v, want a pod killed (137), then one that succeeded", name, e3)
				}
			}
			var pods []string
			for _, e := range r.exits {
				pods = append(pods, fmt.Sprintf("%s:%d(%v)", e.Index, e.Code, e.Took.Round(time.Millisecond)))
			}
			t.Logf("%s: %d sets, Job complete in %v, %d repository requests, %d store requests; pods index:exit(time) %s", name, nSets, r.took.Round(time.Millisecond), r.requests, r.storeRequests, strings.Join(pods, " "))
		}
		one, eight, killed := runs[key{store, 1, false}], runs[key{store, 8, false}], runs[key{store, 8, true}]
		t.Logf("%s store, 1 shard vs 8: wall %v vs %v (1/8 = %.2f; 8 with shard 3 killed and retried: %v), repository requests %d vs %d (8/1 = %.2f), store requests %d vs %d",
			store, one.took.Round(time.Millisecond), eight.took.Round(time.Millisecond), one.took.Seconds()/eight.took.Seconds(), killed.took.Round(time.Millisecond),
			one.requests, eight.requests, float64(eight.requests)/float64(one.requests), one.storeRequests, eight.storeRequests)
	}
	return runs
}

// buildPrebakeOnce builds cmd/prebake for the test.
func buildPrebakeOnce(t testing.TB) string {
	t.Helper()
	e := &itEnv{}
	return e.prebake(t)
}

// TestWarmJobNodeIT is journey 9 of issue 25: examples/warm-job.yaml runs as
// real pods of prebake's own image (`make image`, pushed to the node's
// registry) on the real node, the Job controller of the cluster's
// kube-controller-manager driving the indexes: 2 completions warm the 4
// sets of testdata/demo-repo (a file:// repository and a file:// store,
// both hostPath volumes: the only change to the example besides the store,
// the repository, N and tiny requests). The Job completes, each index once,
// each set is done by exactly one pod (its -o json in the pod's log), and
// the store holds every set's manifest, complete, with nothing partial.
// TestITWarmIndexedJob keeps the process kubelet for what a real node
// cannot give on two cores: 200 sets on 8 shards and a SIGKILL at an exact
// point of a shard's run.
func TestWarmJobNodeIT(t *testing.T) {
	testenv.RequireIT(t)
	c := k8scluster.Start(t)
	image := c.PrebakeImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	repoDir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "demo-repo"))
	if err != nil {
		t.Fatal(err)
	}
	const nSets, n = 4, 2
	sets := setsYAML(corpusSets(t, repoDir, nSets))
	storeDir, err := os.MkdirTemp("", "prebake-warm-store-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(storeDir) })
	if err := os.Chmod(storeDir, 0o777); err != nil { // the image's user 65532
		t.Fatal(err)
	}
	sa, example := exampleWarmJob(t)
	job := warmJobFor(t, example, n, "file:///store", "--no-default-repositories", "--repositories=file:///repo/")
	spec := &job.Spec.Template.Spec
	ctr := &spec.Containers[0]
	ctr.Image, ctr.ImagePullPolicy = image, corev1.PullIfNotPresent
	// The example's init container (chmod 1777 /cache, so prebake keeps a
	// private cache under it without a warning) runs from the node's
	// registry's busybox, whose applets are called through /bin/busybox.
	for i := range spec.InitContainers {
		ic := &spec.InitContainers[i]
		ic.Image, ic.ImagePullPolicy = c.TestImage, corev1.PullIfNotPresent
		if len(ic.Command) > 0 && !strings.HasPrefix(ic.Command[0], "/") {
			ic.Command = append([]string{"/bin/busybox"}, ic.Command...)
		}
	}
	ctr.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "store", MountPath: "/store"},
		corev1.VolumeMount{Name: "repo", MountPath: "/repo", ReadOnly: true})
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: "store", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: storeDir}}},
		corev1.Volume{Name: "repo", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: repoDir}}})
	ns := "warm-node"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	etl, err := os.ReadFile("../../examples/locks/etl.lock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "prebake-sets"},
		Data: map[string]string{"sets.yaml": sets, "etl.lock": string(etl)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podLogs := func() string {
		var b strings.Builder
		pods, _ := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		for _, p := range pods.Items {
			log, _ := c.Client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			fmt.Fprintf(&b, "pod %s (%s, index %s):\n%s\n", p.Name, p.Status.Phase, p.Annotations["batch.kubernetes.io/job-completion-index"], log)
		}
		return b.String()
	}
	var done *batchv1.Job
	for done == nil {
		j, err := c.Client.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("job %s/%s: %v\n%s", ns, job.Name, err, podLogs())
		}
		for _, cond := range j.Status.Conditions {
			if cond.Status != corev1.ConditionTrue {
				continue
			}
			switch cond.Type {
			case batchv1.JobComplete:
				done = j
			case batchv1.JobFailed:
				t.Fatalf("job %s/%s failed: %s: %s\n%s", ns, job.Name, cond.Reason, cond.Message, podLogs())
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(start)
	if done.Status.Succeeded != n || done.Status.Failed != 0 {
		t.Errorf("job status: %d succeeded, %d failed; want %d, 0", done.Status.Succeeded, done.Status.Failed, n)
	}
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job.Name})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	hashes := map[string]bool{}
	indexes := map[string]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != k8scluster.NodeName || p.Spec.Containers[0].Image != image || p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s: node %q, image %s, phase %s; want a pod of %s that ran on %s", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, p.Status.Phase, image, k8scluster.NodeName)
			continue
		}
		indexes[p.Annotations["batch.kubernetes.io/job-completion-index"]] = true
		log, err := c.Client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Sets []struct{ Name, LockHash string }
		}
		// The container's log is stdout and stderr: the JSON object is the
		// line that starts with "{".
		for _, line := range strings.Split(string(log), "\n") {
			if strings.HasPrefix(line, "{") {
				if err := json.Unmarshal([]byte(line), &out); err != nil {
					t.Fatalf("pod %s: -o json: %v\n%s", p.Name, err, log)
				}
			}
		}
		for _, s := range out.Sets {
			names[s.Name]++
			hashes[s.LockHash] = true
		}
	}
	if len(indexes) != n {
		t.Errorf("pods succeeded for indexes %v, want %d indexes\n%s", indexes, n, podLogs())
	}
	for i := range nSets {
		if got := names[fmt.Sprintf("s%03d", i)]; got != 1 {
			t.Errorf("set s%03d done by %d pods, want 1\n%s", i, got, podLogs())
		}
	}
	if got := storeState(t, storeDir); got != len(hashes) || got == 0 {
		t.Errorf("%d set manifests in the store, want one per lock hash (%d)", got, len(hashes))
	}
	t.Logf("warm Job of prebake's image: %d sets on %d real pods, complete in %s", nSets, n, took.Round(100*time.Millisecond))
}
