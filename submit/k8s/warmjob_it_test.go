package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/k8senv"
	"github.com/prebake/prebake/internal/testenv/warmjob"
	"github.com/prebake/prebake/s3store/s3test"
)

// startJobController runs the real kube-controller-manager with the Job
// controller only, against c; it stops in t.Cleanup (before the cluster).
func startJobController(t testing.TB, c *k8senv.Cluster) {
	t.Helper()
	bin := k8senv.Binary(t, "kube-controller-manager")
	kc := filepath.Join(c.Dir, "kcm.kubeconfig")
	c.WriteKubeconfig(t, kc)
	startProc(t, c.Dir, "kube-controller-manager", bin,
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--controllers=job", "--leader-elect=false", "--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(testenv.FreePort(t)), "--v=1")
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
func runWarmJob(t testing.TB, c *k8senv.Cluster, k *k8senv.Kubelet, bin, ns string, sa *corev1.ServiceAccount, job *batchv1.Job, sets string, srv *mavenhttp.Server, env []string, kill func(*corev1.Pod) int) warmRun {
	t.Helper()
	ctx := context.Background()
	c.EnsureNamespace(t, ns)
	if _, err := c.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(ctx, warmjob.ConfigMap(t, "../../examples/locks/etl.lock", sets), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pk := startProcKubelet(t, k, ns, bin, append([]string{"PREBAKE_CACHE=", "NO_COLOR=1"}, env...), kill)
	srv.Reset()
	start := time.Now()
	if _, err := c.Admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		j, err := c.Admin.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
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
				t.Fatalf("job %s/%s failed: %s: %s\npods: %+v\n%s", ns, job.Name, cond.Reason, cond.Message, pk.finished(), k.Dump(ns))
			}
		}
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("job %s/%s not complete after 10 min: %+v\n%s", ns, job.Name, j.Status, k.Dump(ns))
		}
		time.Sleep(200 * time.Millisecond)
	}
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
	c := k8senv.Start(t)
	startJobController(t, c)
	k := k8senv.StartKubelet(t, c)
	bin := buildPrebakeOnce(t)
	sets := warmjob.SetsYAML(warmjob.CorpusSets(t, repoDir, nSets))
	srv := mavenhttp.New(repoDir, mavenhttp.WithDelay(20*time.Millisecond))
	defer srv.Close()
	sa, example := warmjob.Example(t, "../../examples/warm-job.yaml")
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
			job := warmjob.For(t, example, n, storeURL, args...)
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
			if got := warmjob.StoreState(t, storeDir); got != len(hashes) {
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
