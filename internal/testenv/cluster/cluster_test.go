package cluster

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// TestRealPodRuns runs a pod from the local registry's test image on the
// real node: the API server shows it Failed with the container's exit code
// 3, and pods/log (proxied by the API server to the kubelet) returns its
// output.
func TestRealPodRuns(t *testing.T) {
	c := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: c.TestImage, Command: []string{"/bin/sh", "-c", "echo hello; exit 3"},
			}},
		},
	}
	got := runPod(ctx, t, c, pod)
	if got.Status.Phase != corev1.PodFailed {
		t.Errorf("phase %s, want Failed", got.Status.Phase)
	}
	if len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("container statuses %+v, want one terminated", got.Status.ContainerStatuses)
	}
	if code := got.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if got.Spec.NodeName != NodeName {
		t.Errorf("scheduled to %q, want %q", got.Spec.NodeName, NodeName)
	}
	if logs := podLog(ctx, t, c, pod); strings.TrimSpace(logs) != "hello" {
		t.Errorf("pods/log = %q, want hello", logs)
	}
}

// TestServiceRouting: a pod reaches the API server through the kubernetes
// Service's cluster IP (kube-proxy's iptables rules), the way a Spark driver
// does, and the cluster DNS resolves the Service's name.
func TestServiceRouting(t *testing.T) {
	c := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "service-routing", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: c.TestImage,
				Command: []string{"/bin/sh", "-c", `echo "$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"; /bin/busybox nc -w 5 "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT" </dev/null && echo reached; /bin/busybox nslookup kubernetes.default.svc.cluster.local`},
			}},
		},
	}
	got := runPod(ctx, t, c, pod)
	logs := podLog(ctx, t, c, pod)
	if got.Status.Phase != corev1.PodSucceeded || !strings.Contains(logs, "10.96.0.1:443\nreached") || !strings.Contains(logs, "Address: 10.96.0.1") {
		t.Errorf("phase %s, log:\n%s\nkube-proxy:\n%s", got.Status.Phase, logs, c.tail("kube-proxy", 20))
	}
}

// TestSparkImage runs each Spark base image's entry point in pass-through
// mode on the node, as user 185: spark-submit --version prints the version.
func TestSparkImage(t *testing.T) {
	c := Start(t)
	for _, v := range testenv.SparkVersions {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			start := time.Now()
			ref, err := c.SparkImage(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("pushed %s in %s", ref, time.Since(start).Round(time.Millisecond))
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "spark-version-" + strings.ReplaceAll(v, ".", "-"), Namespace: "default"},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "main", Image: ref, Args: []string{"sh", "-c", "id -u; pwd; /opt/spark/bin/spark-submit --version"},
					}},
				},
			}
			got := runPod(ctx, t, c, pod)
			logs := podLog(ctx, t, c, pod)
			if got.Status.Phase != corev1.PodSucceeded {
				t.Fatalf("phase %s, want Succeeded; log:\n%s", got.Status.Phase, logs)
			}
			for _, want := range []string{"185\n/opt/spark/work-dir\n", "version " + v} {
				if !strings.Contains(logs, want) {
					t.Errorf("log lacks %q:\n%s", want, logs)
				}
			}
		})
	}
}

// runPod creates pod and waits until it ends.
func runPod(ctx context.Context, t *testing.T, c *Cluster, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	start := time.Now()
	if _, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The node may be the run's test bed, which outlives the test: a rerun
	// creates the pod again.
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Client.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	for {
		p, err := c.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			t.Logf("pod %s ended %s after %s", pod.Name, p.Status.Phase, time.Since(start).Round(time.Millisecond))
			return p
		}
		if ctx.Err() != nil {
			t.Fatalf("pod %s still %s: %+v\nkubelet:\n%s", pod.Name, p.Status.Phase, p.Status, c.tail("kubelet", 40))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// podLog reads the pod's log through the API server (pods/log).
func podLog(ctx context.Context, t *testing.T, c *Cluster, pod *corev1.Pod) string {
	t.Helper()
	logs, err := c.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("pods/log of %s: %v", pod.Name, err)
	}
	return string(logs)
}

func TestSplitRule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`INPUT -j KUBE-FIREWALL`, []string{"INPUT", "-j", "KUBE-FIREWALL"}},
		{`KUBE-FIREWALL ! -s 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -j DROP`,
			[]string{"KUBE-FIREWALL", "!", "-s", "127.0.0.0/8", "-m", "comment", "--comment", "block incoming localnet connections", "-j", "DROP"}},
		{`OUTPUT -m comment --comment "a \"q\"" -j KUBE-X`, []string{"OUTPUT", "-m", "comment", "--comment", `a "q"`, "-j", "KUBE-X"}},
	} {
		if diff := cmp.Diff(tc.want, splitRule(tc.in)); diff != "" {
			t.Errorf("splitRule(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestClosedToOtherUsers (issue 41, H2): while the cluster runs, another
// local user (uid 65534, by setpriv) cannot write etcd (TLS with client
// certificates whose keys sit in the 0700 Dir; its port is closed to other
// uids too), cannot use the kubelet's API (no anonymous access: 401), and
// cannot push to the registry (closed to other uids), while root (the
// node, the tests) can; privileged pods are refused.
func TestClosedToOtherUsers(t *testing.T) {
	c := Start(t)
	curlBin, setpriv := testenv.Binary(t, "curl", ""), testenv.Binary(t, "setpriv", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	curl := func(asNobody bool, args ...string) (string, error) {
		argv := append([]string{curlBin, "-sS", "-k", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}"}, args...)
		if asNobody {
			argv = append([]string{setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"}, argv...)
		}
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if st, err := os.Stat(c.Dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("cluster dir %s: mode %v (%v), want 0700", c.Dir, st.Mode().Perm(), err)
	}
	put := []string{"-X", "POST", "-d", `{"key":"L3JlZ2lzdHJ5L2hpamFjaw==","value":"eA=="}`, c.etcdURL + "/v3/kv/put"}
	if out, err := curl(true, put...); err == nil {
		t.Errorf("uid 65534 wrote etcd (%s): %s", c.etcdURL, out)
	}
	// Even root without the client certificate is refused by etcd's TLS.
	if out, err := curl(false, put...); err == nil && out == "200" {
		t.Errorf("etcd took a write without a client certificate: %s", out)
	}
	for _, path := range []string{"/pods", "/runningpods/", "/configz"} {
		if out, _ := curl(true, c.kubeletURL+path); out != "401" {
			t.Errorf("uid 65534 GET kubelet %s: HTTP %s, want 401", path, out)
		}
	}
	upload := []string{"-X", "POST", "http://" + c.Registry + "/v2/hijack/blobs/uploads/"}
	if out, err := curl(true, upload...); err == nil {
		t.Errorf("uid 65534 reached the registry: HTTP %s", out)
	}
	if out, err := curl(false, upload...); err != nil || out != "202" {
		t.Errorf("root's upload to the registry: HTTP %s (%v), want 202", out, err)
	}
	priv := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: "default"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "main", Image: c.TestImage, Command: []string{"/bin/true"},
			SecurityContext: &corev1.SecurityContext{Privileged: &priv},
		}}},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err == nil {
		_ = c.Client.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{})
		t.Error("a privileged pod was admitted; want it refused")
	}
}
