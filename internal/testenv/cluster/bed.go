package cluster

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/prebake/prebake/internal/testenv/bed"
)

// The test bed (issue 43): one real node per run, not per test binary.
//
// `make test` and `make cluster` run the node in the background
// (hack/cluster serve), which publishes its state in StateFile. Start
// attaches to that node when the file names a live one, and launches its
// own (the machine lock held until Stop) only when none runs, so
// `go test -run X ./pkg` alone still works.
//
// Attached binaries share the node a group of tests at a time: Start takes
// the use lock (useLockFile) for its test, reference-counted within the
// binary, so a binary's parallel tests run together and the node passes to
// another binary as soon as the last of them ends, instead of when the
// binary exits. When a group ends, the namespaces its tests created are
// deleted (each test makes namespaces of its own).

const (
	// StateFile is where a served node (hack/cluster serve) publishes its
	// state; PREBAKE_CLUSTER names another file.
	StateFile   = "/run/prebake-cluster.json"
	useLockFile = "/run/prebake-cluster-use.lock"
)

// state is what an attaching binary needs of a running node.
type state struct {
	Pid                             int
	Dir, Kubeconfig, Server         string
	CAFile, CAKeyFile, Token        string
	Registry                        string
	PauseImage, TestImage           string
	Containerd, EtcdURL, KubeletURL string
}

// StatePath is the node state file Start attaches to ("" when none).
func StatePath() string {
	if p, ok := os.LookupEnv("PREBAKE_CLUSTER"); ok {
		return p
	}
	return StateFile
}

// Publish writes c's state to path (0600: it holds the admin token) for
// Start to attach to; the caller removes it before stopping c.
func (c *Cluster) Publish(path string) error {
	return bed.Publish(path, state{
		Pid: os.Getpid(), Dir: c.Dir, Kubeconfig: c.Kubeconfig, Server: c.Server,
		CAFile: c.CAFile, CAKeyFile: c.path("ca.key"), Token: c.Token, Registry: c.Registry,
		PauseImage: c.PauseImage, TestImage: c.TestImage,
		Containerd: c.containerd, EtcdURL: c.etcdURL, KubeletURL: c.kubeletURL,
	})
}

// Attach returns the node published in path, whose process must be alive
// and whose API server ready. Its Stop stops nothing.
func Attach(ctx context.Context, path string) (*Cluster, error) {
	s, err := bed.ReadState(path, func(s *state) int { return s.Pid })
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: s.Dir, Kubeconfig: s.Kubeconfig, Server: s.Server, CAFile: s.CAFile, Token: s.Token,
		Registry: s.Registry, PauseImage: s.PauseImage, TestImage: s.TestImage,
		containerd: s.Containerd, etcdURL: s.EtcdURL, kubeletURL: s.KubeletURL, attached: true}
	if c.ca, err = loadPKI(s.CAFile, s.CAKeyFile); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Config.QPS, c.Config.Burst = 100, 200
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || strings.TrimSpace(string(body)) != "ok" {
		return nil, fmt.Errorf("the test bed's API server %s is not ready: %v", c.Server, err)
	}
	return c, nil
}

func loadPKI(certFile, keyFile string) (*pki, error) {
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	cp, _ := pem.Decode(cb)
	kp, _ := pem.Decode(kb)
	if cp == nil || kp == nil {
		return nil, fmt.Errorf("%s or %s: no PEM block", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cp.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS1PrivateKey(kp.Bytes)
	if err != nil {
		return nil, err
	}
	return &pki{caCert: cert, caKey: key}, nil
}

// use is the binary's hold on an attached node: the use lock, taken by the
// first running test that needs the node and released by the last.
var use struct {
	gate sync.Mutex // held while taking the lock
	mu   sync.Mutex
	n    int
	f    *os.File
	ns   map[string]bool // the namespaces when the group began
	wait time.Duration   // waited for the lock, in all
}

// hold takes the node for t (released at t's cleanup).
func (c *Cluster) hold(t testing.TB) {
	t.Helper()
	use.gate.Lock()
	use.mu.Lock()
	if use.n > 0 {
		use.n++
		use.mu.Unlock()
		use.gate.Unlock()
		t.Cleanup(c.release)
		return
	}
	use.mu.Unlock()
	start := time.Now()
	f, err := os.OpenFile(useLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
		}
	}
	if err != nil {
		use.gate.Unlock()
		t.Fatalf("cluster: the test bed's use lock %s: %v", useLockFile, err)
	}
	waited := time.Since(start)
	ns := c.namespaces()
	use.mu.Lock()
	use.n, use.f, use.ns = 1, f, ns
	use.wait += waited
	use.mu.Unlock()
	use.gate.Unlock()
	if waited > time.Second {
		t.Logf("cluster: waited %s for the test bed (another test binary's node tests)", waited.Round(100*time.Millisecond))
	}
	t.Cleanup(c.release)
}

// release ends a test's hold; the last one deletes the group's namespaces
// and lets the node go to another binary.
func (c *Cluster) release() {
	use.mu.Lock()
	defer use.mu.Unlock()
	if use.n--; use.n > 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for n := range c.namespaces() {
		// Only what appeared during the group; nothing when the group's
		// start could not be listed.
		if use.ns != nil && !use.ns[n] && n != "default" && !strings.HasPrefix(n, "kube-") {
			_ = c.Client.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{})
		}
	}
	_ = syscall.Flock(int(use.f.Fd()), syscall.LOCK_UN)
	use.f.Close()
	use.f, use.ns = nil, nil
}

// namespaces lists the node's namespaces (empty on an error: a group then
// deletes nothing it cannot tell apart).
func (c *Cluster) namespaces() map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]bool{}
	list, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	for _, n := range list.Items {
		out[n.Name] = true
	}
	return out
}

// useWait is how long this binary waited for an attached node, in all.
func useWait() time.Duration {
	use.mu.Lock()
	defer use.mu.Unlock()
	return use.wait
}
