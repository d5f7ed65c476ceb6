package cluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	start := time.Now()
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	for {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			got = p
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod still %s after 3m: %+v\nkubelet:\n%s", p.Status.Phase, p.Status, c.tail("kubelet", 40))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("pod ended %s after %s", got.Status.Phase, time.Since(start).Round(time.Millisecond))
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
	logs, err := c.Client.CoreV1().Pods("default").GetLogs("hello", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("pods/log: %v", err)
	}
	if strings.TrimSpace(string(logs)) != "hello" {
		t.Errorf("pods/log = %q, want hello", logs)
	}
}
