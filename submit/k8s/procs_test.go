package k8s

// The test kubelet's process mode: the pods of a namespace run as local
// processes, so that a real controller (the Job controller of
// kube-controller-manager) drives real work and sees real exits.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv/k8senv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// procKubelet binds the pods of ns to fake-node and runs each pod's single
// container as a local process:
//
//   - the image's entrypoint is bin (the prebake binary): argv is bin plus
//     the container's args (a command's first word is replaced by bin);
//   - $(VAR) in the args expands from the container's env, whose valueFrom
//     fieldRef (metadata.annotations['…'], labels, name, namespace) is
//     resolved as the kubelet's downward API does (JOB_COMPLETION_INDEX);
//   - every volume mount path is mapped to a local directory (a configMap's
//     keys, or its items at their paths, written as files; an emptyDir a
//     fresh directory) wherever it appears in the args;
//   - the exit goes back through the API server: the container's terminated
//     state (exit code, reason) and the pod's phase, Succeeded or Failed.
//
// kill, when set, is asked for each pod as it starts: a positive n
// SIGKILLs the process once it has written n lines to stderr (mid-run, at
// a point the test chooses; exit 137, as the kubelet reports an OOM- or
// node-killed container). A pod's stdout is kept whole in its podExit.
type procKubelet struct {
	k    *k8senv.Kubelet
	t    testing.TB
	ns   string
	bin  string
	env  []string
	kill func(pod *corev1.Pod) (afterLines int)
	dir  string

	mu      sync.Mutex
	started map[types.UID]bool
	exits   []podExit
	wg      sync.WaitGroup
	stop    chan struct{}
}

// podExit is one finished pod process.
type podExit struct {
	Pod, Index string
	Code       int
	Killed     bool
	Took       time.Duration
	Stdout     []byte `json:"-"`
}

func startProcKubelet(t testing.TB, k *k8senv.Kubelet, ns, bin string, env []string, kill func(*corev1.Pod) int) *procKubelet {
	p := &procKubelet{k: k, t: t, ns: ns, bin: bin, env: env, kill: kill, dir: t.TempDir(), started: map[types.UID]bool{}, stop: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.sync()
			}
		}
	}()
	t.Cleanup(func() {
		close(p.stop)
		<-done
		p.wg.Wait()
	})
	return p
}

// sync starts the pods not seen yet.
func (p *procKubelet) sync() {
	pods, err := p.k.Cluster().Admin.CoreV1().Pods(p.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := pods.Items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		p.mu.Lock()
		seen := p.started[pod.UID]
		p.started[pod.UID] = true
		p.mu.Unlock()
		if seen {
			continue
		}
		if pod.Spec.NodeName == "" {
			p.k.Bind(p.t, p.ns, pod.Name)
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.run(&pod)
		}()
	}
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// fieldValue resolves a downward-API fieldRef of pod.
func fieldValue(pod *corev1.Pod, path string) string {
	get := func(m map[string]string, prefix string) (string, bool) {
		if !strings.HasPrefix(path, prefix+"['") || !strings.HasSuffix(path, "']") {
			return "", false
		}
		return m[path[len(prefix)+2:len(path)-2]], true
	}
	if v, ok := get(pod.Annotations, "metadata.annotations"); ok {
		return v
	}
	if v, ok := get(pod.Labels, "metadata.labels"); ok {
		return v
	}
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	}
	return ""
}

// run runs pod's container to its end and reports it.
func (p *procKubelet) run(pod *corev1.Pod) {
	ctx := context.Background()
	if len(pod.Spec.Containers) != 1 {
		p.finish(pod, 1, "Error", fmt.Sprintf("test kubelet: %d containers, want 1", len(pod.Spec.Containers)), false, 0)
		return
	}
	c := pod.Spec.Containers[0]
	root, err := os.MkdirTemp(p.dir, pod.Name+"-")
	if err != nil {
		p.finish(pod, 1, "Error", err.Error(), false, 0)
		return
	}
	vols := map[string]string{} // volume name → local dir
	for _, v := range pod.Spec.Volumes {
		d := filepath.Join(root, "vol-"+v.Name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			p.finish(pod, 1, "Error", err.Error(), false, 0)
			return
		}
		if v.ConfigMap != nil {
			cm, err := p.k.Cluster().Admin.CoreV1().ConfigMaps(p.ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				p.finish(pod, 1, "CreateContainerConfigError", err.Error(), false, 0)
				return
			}
			files := map[string]string{} // path in the volume → key
			for k := range cm.Data {
				files[k] = k
			}
			if len(v.ConfigMap.Items) > 0 { // only the items, at their paths
				files = map[string]string{}
				for _, it := range v.ConfigMap.Items {
					if _, ok := cm.Data[it.Key]; !ok {
						p.finish(pod, 1, "CreateContainerConfigError", fmt.Sprintf("configmap %s has no key %s", cm.Name, it.Key), false, 0)
						return
					}
					if !filepath.IsLocal(it.Path) {
						p.finish(pod, 1, "CreateContainerConfigError", fmt.Sprintf("configmap item path %q", it.Path), false, 0)
						return
					}
					files[it.Path] = it.Key
				}
			}
			for path, k := range files {
				dst := filepath.Join(d, filepath.FromSlash(path))
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					p.finish(pod, 1, "Error", err.Error(), false, 0)
					return
				}
				if err := os.WriteFile(dst, []byte(cm.Data[k]), 0o644); err != nil {
					p.finish(pod, 1, "Error", err.Error(), false, 0)
					return
				}
			}
		}
		vols[v.Name] = d
	}
	// Longest mount path first, so /a/b maps before /a.
	mounts := append([]corev1.VolumeMount(nil), c.VolumeMounts...)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
	env := map[string]string{}
	var envList []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = fieldValue(pod, e.ValueFrom.FieldRef.FieldPath)
		}
		env[e.Name] = v
		envList = append(envList, e.Name+"="+v)
	}
	argv := append([]string(nil), c.Command...)
	if len(argv) > 0 {
		argv = argv[1:]
	}
	argv = append(argv, c.Args...)
	for i, a := range argv {
		a = varRef.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
		for _, m := range mounts {
			if d, ok := vols[m.Name]; ok {
				a = strings.ReplaceAll(a, m.MountPath, d)
			}
		}
		argv[i] = a
	}
	cmd := exec.Command(p.bin, argv...)
	cmd.Env = append(append(append(os.Environ(), envList...), p.env...), "HOME="+root)
	cmd.Dir = root
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	out, _ := cmd.StderrPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		p.finish(pod, 128, "StartError", err.Error(), false, 0)
		return
	}
	killAfter := 0
	if p.kill != nil {
		killAfter = p.kill(pod)
	}
	p.k.SetStatus(p.t, p.ns, pod.Name, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.StartTime = &metav1.Time{Time: start}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: start}}}}}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		p.k.Log(p.ns, pod.Name, c.Name, sc.Text())
		if n == killAfter {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	took := time.Since(start)
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = ee.ExitCode()
			}
		}
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	p.finish(pod, code, reason, "", code == 137, took, stdout.Bytes())
}

func (p *procKubelet) finish(pod *corev1.Pod, code int, reason, msg string, killed bool, took time.Duration, stdout ...[]byte) {
	now := metav1.Now()
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	name := "main"
	if len(pod.Spec.Containers) > 0 {
		name = pod.Spec.Containers[0].Name
	}
	p.k.SetStatus(p.t, p.ns, pod.Name, func(s *corev1.PodStatus) {
		s.Phase = phase
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: int32(code), Reason: reason, Message: msg, FinishedAt: now}}}}
	})
	p.mu.Lock()
	p.exits = append(p.exits, podExit{Pod: pod.Name, Index: pod.Annotations["batch.kubernetes.io/job-completion-index"], Code: code, Killed: killed, Took: took, Stdout: bytes.Join(stdout, nil)})
	p.mu.Unlock()
}

// finished returns the pod processes that ended so far.
func (p *procKubelet) finished() []podExit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]podExit(nil), p.exits...)
}
