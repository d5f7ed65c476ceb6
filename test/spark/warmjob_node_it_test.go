package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/internal/testenv/warmjob"
)

// TestWarmJobNodeIT is journey 9 of issue 25: examples/warm-job.yaml runs as
// real pods of prebake's own image (`make image`, pushed to the node's
// registry) on the real node, the Job controller of the cluster's
// kube-controller-manager driving the indexes: 2 completions warm the 4
// sets of testdata/demo-repo (a file:// repository and a file:// store,
// both hostPath volumes: the only change to the example besides the store,
// the repository, N and tiny requests). The Job completes, each index once,
// each set is done by exactly one pod (its -o json in the pod's log), and
// the store holds every set's manifest, complete, with nothing partial.
// submit/k8s's TestITWarmIndexedJob keeps the process kubelet for what a real node
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
	sets := warmjob.SetsYAML(warmjob.CorpusSets(t, repoDir, nSets))
	storeDir, err := os.MkdirTemp("", "prebake-warm-store-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(storeDir) })
	if err := os.Chmod(storeDir, 0o777); err != nil { // the image's user 65532
		t.Fatal(err)
	}
	sa, example := warmjob.Example(t, "../../examples/warm-job.yaml")
	job := warmjob.For(t, example, n, "file:///store", "--no-default-repositories", "--repositories=file:///repo/")
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
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, warmjob.ConfigMap(t, "../../examples/locks/etl.lock", sets), metav1.CreateOptions{}); err != nil {
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
	if got := warmjob.StoreState(t, storeDir); got != len(hashes) || got == 0 {
		t.Errorf("%d set manifests in the store, want one per lock hash (%d)", got, len(hashes))
	}
	t.Logf("warm Job of prebake's image: %d sets on %d real pods, complete in %s", nSets, n, took.Round(100*time.Millisecond))
}
