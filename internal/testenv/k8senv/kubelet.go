package k8senv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kubelet plays the node: it binds pods to fake-node, sets their status
// and serves their container logs to the API server.
type Kubelet struct {
	c    *Cluster
	srv  *http.Server
	ln   net.Listener
	mu   sync.Mutex
	logs map[string][]logEntry // ns/pod/container
}

type logEntry struct {
	ts   time.Time
	text string
}

// StartKubelet returns c's test kubelet (the fake node's), started on the
// first call; it stops with c.
func StartKubelet(t testing.TB, c *Cluster) *Kubelet {
	t.Helper()
	c.kubeletMu.Lock()
	defer c.kubeletMu.Unlock()
	if c.kubelet != nil {
		return c.kubelet
	}
	k, err := launchKubelet(c)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.kubelet = k
	c.mu.Unlock()
	return k
}

func launchKubelet(c *Cluster) (*Kubelet, error) {
	certPEM, keyPEM, err := selfSignedPEM("127.0.0.1")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return nil, err
	}
	k := &Kubelet{c: c, ln: ln, logs: map[string][]logEntry{}}
	k.srv = &http.Server{Handler: http.HandlerFunc(k.serveLogs), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = k.srv.Serve(ln) }()
	c.AtStop(func() { _ = k.srv.Close() })

	ctx := context.Background()
	node, err := c.Admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fake-node"}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(ln.Addr().(*net.TCPAddr).Port)
	if _, err := c.Admin.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	return k, nil
}

// serveLogs is the kubelet's /containerLogs/{ns}/{pod}/{container}; it honours
// sinceTime, timestamps, tailLines and limitBytes.
func (k *Kubelet) serveLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/containerLogs/") || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	k.mu.Lock()
	entries := append([]logEntry{}, k.logs[strings.Join(parts, "/")]...)
	k.mu.Unlock()
	if s := q.Get("sinceTime"); s != "" {
		since, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var keep []logEntry
		for _, e := range entries {
			if !e.ts.Before(since) {
				keep = append(keep, e)
			}
		}
		entries = keep
	}
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 && n < len(entries) {
		entries = entries[len(entries)-n:]
	}
	var b strings.Builder
	for _, e := range entries {
		if q.Get("timestamps") == "true" {
			b.WriteString(e.ts.UTC().Format(time.RFC3339Nano) + " ")
		}
		b.WriteString(e.text + "\n")
	}
	out := b.String()
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n < len(out) {
		out = out[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(out))
}

// forget drops the logs of ns's pods.
func (k *Kubelet) forget(ns string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key := range k.logs {
		if strings.HasPrefix(key, ns+"/") {
			delete(k.logs, key)
		}
	}
}

func (k *Kubelet) Log(ns, pod, container string, lines ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := ns + "/" + pod + "/" + container
	for _, l := range lines {
		k.logs[key] = append(k.logs[key], logEntry{ts: time.Now(), text: l})
	}
}

// WaitPod waits for the driver pod in ns (spark-submit creates it) and
// returns its name.
func (k *Kubelet) WaitPod(t testing.TB, ns string) string {
	t.Helper()
	for start := time.Now(); time.Since(start) < 60*time.Second; time.Sleep(100 * time.Millisecond) {
		l, err := k.c.Admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "spark-role=driver"})
		if err == nil && len(l.Items) > 0 {
			return l.Items[0].Name
		}
	}
	t.Errorf("no driver pod in %s after 60s", ns)
	return ""
}

// Bind schedules the pod on fake-node, as the scheduler does.
func (k *Kubelet) Bind(t testing.TB, ns, pod string) {
	t.Helper()
	err := k.c.Admin.CoreV1().Pods(ns).Bind(context.Background(), &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: "fake-node"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("binding %s/%s: %v", ns, pod, err)
	}
}

// SetStatus updates the pod's status subresource.
func (k *Kubelet) SetStatus(t testing.TB, ns, pod string, mutate func(*corev1.PodStatus)) {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; attempt < 5; attempt++ {
		p, err := k.c.Admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Errorf("getting %s/%s: %v", ns, pod, err)
			return
		}
		mutate(&p.Status)
		_, err = k.c.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Errorf("updating status of %s/%s: %v", ns, pod, err)
			return
		}
	}
}

func PhaseWith(phase corev1.PodPhase, statuses ...corev1.ContainerStatus) func(*corev1.PodStatus) {
	return func(s *corev1.PodStatus) {
		s.Phase = phase
		for i := range statuses {
			statuses[i].Image = "apache/spark:3.5.3"
			if statuses[i].State.Running != nil {
				statuses[i].State.Running.StartedAt = metav1.Now()
				statuses[i].Started, statuses[i].Ready = ptr(true), true
			}
			if statuses[i].State.Terminated != nil {
				statuses[i].State.Terminated.FinishedAt = metav1.Now()
			}
		}
		s.ContainerStatuses = statuses
	}
}

func ptr[T any](v T) *T { return &v }

// DriverContainer is the driver pod's container Spark names.
const DriverContainer = "spark-kubernetes-driver"

// RunToEnd binds the pod, starts the driver, logs lines, then ends it
// (end, unless nil: the driver then stays running).
func (k *Kubelet) RunToEnd(t testing.TB, ns, pod string, lines []string, end func(*corev1.PodStatus)) {
	k.Bind(t, ns, pod)
	k.SetStatus(t, ns, pod, PhaseWith(corev1.PodPending, corev1.ContainerStatus{Name: DriverContainer,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating", Message: "msg for ContainerCreating"}}}))
	time.Sleep(300 * time.Millisecond)
	k.SetStatus(t, ns, pod, PhaseWith(corev1.PodRunning, corev1.ContainerStatus{Name: DriverContainer,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}))
	k.Log(ns, pod, DriverContainer, lines...)
	time.Sleep(700 * time.Millisecond)
	if end != nil {
		k.SetStatus(t, ns, pod, end)
	}
}

// Dump is every log line the kubelet holds for ns, the last 20 of each
// container (for a failure message).
func (k *Kubelet) Dump(ns string) string {
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

// Cluster is the API server k plays the node of.
func (k *Kubelet) Cluster() *Cluster { return k.c }
