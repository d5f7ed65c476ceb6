// Package cluster starts a real single-node Kubernetes for the integration
// tests (issue 25): etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd + kubelet (a Ready node that runs pods),
// kube-proxy (iptables), CoreDNS (the cluster DNS, see startDNS) and a registry on 127.0.0.1 holding the images the pods use
// (no outside registry is reachable). The binaries come from
// hack/infra.d/50-k8s.sh and 55-node.sh.
//
// A test binary asks for it with Start, from any test, and calls Stop in
// TestMain:
//
//	func TestMain(m *testing.M) { code := m.Run(); cluster.Stop(); os.Exit(code) }
//
// Start attaches to the run's test bed when one serves the node (bed.go:
// `make test` and `make cluster` run it) and launches the binary's own
// otherwise (Stop then stops it).
//
// The node needs root (CI runs as root), a cgroup hierarchy, overlayfs and
// bridges; pods live on a bridge (Bridge, PodCIDR) in network namespaces the
// node creates, and reach the API server at the bridge's address. One such
// cluster runs on a machine at a time: Launch waits for a lock.
package cluster

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/bed"
)

const (
	// Version of the Kubernetes binaries (hack/infra.d/50-k8s.sh, 55-node.sh).
	Version = "v1.37.2"
	// NodeName is the one node's name.
	NodeName = "prebake-node"
	// Bridge is the pods' CNI bridge; NodeIP, its address, is the node's
	// InternalIP and where the API server and the kubelet listen.
	Bridge  = "prebake0"
	NodeIP  = "10.244.0.1"
	PodCIDR = "10.244.0.0/24"
	// ServiceCIDR holds the Services' cluster IPs (the kubernetes Service is
	// its first address).
	ServiceCIDR = "10.96.0.0/24"
	lockFile    = "/run/prebake-cluster.lock"
	// kubernetesServiceIP is the kubernetes Service's cluster IP.
	kubernetesServiceIP = "10.96.0.1"
)

// Cluster is a running single-node cluster.
type Cluster struct {
	// Dir holds the logs (NAME.log), certificates, kubeconfig and state.
	Dir string
	// Kubeconfig is an admin kubeconfig (system:masters, a static token).
	Kubeconfig string
	// Server is the API server's URL, CAFile its CA, Token the admin token.
	Server, CAFile, Token string
	// Registry is the registry's host:port on 127.0.0.1 (plain http); the
	// node pulls from it.
	Registry string
	// PauseImage and TestImage (busybox: /bin/sh and its applets) are in
	// Registry.
	PauseImage, TestImage string
	// Client is an admin client.
	Client kubernetes.Interface
	// Config is the admin client's configuration.
	Config *rest.Config

	procs      []*testenv.Process
	lock       *os.File
	netnsAtUp  map[string]bool
	containerd string // its socket
	ownDir     bool   // Dir is a temporary directory of Launch
	attached   bool   // another process serves it (Attach): Stop stops nothing
	imgMu      sync.Mutex
	pushed     map[string]bool
	ca         *pki
	etcdURL    string // etcd's client URL (TLS, client certificates)
	kubeletURL string // the kubelet's API (authenticated, webhook-authorized)
}

// Option configures Launch.
type Option func(*options)

type options struct {
	dir        string
	log        func(format string, args ...any)
	privileged bool
}

// WithPrivileged lets the cluster run privileged pods (the API server's
// --allow-privileged); without it they are refused.
func WithPrivileged() Option { return func(o *options) { o.privileged = true } }

// WithDir puts the cluster's state in dir (emptied first) instead of a new
// temporary directory; Stop leaves dir in place.
func WithDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithLog reports the steps of Launch and Stop (and how long each took).
func WithLog(f func(format string, args ...any)) Option { return func(o *options) { o.log = f } }

// shared is the test binary's cluster (Start, Stop).
var shared testenv.Shared[*Cluster]

// Start returns the test binary's cluster. When a test bed serves the
// node (`make test`, `make cluster`: StateFile, or the file
// PREBAKE_CLUSTER names), Start attaches to it and holds it for t's
// duration (with the binary's other running node tests); otherwise it
// launches the binary's own on the first call, under the machine lock
// until Stop. Its pods run JVMs: it skips unless the JVM tier runs
// (testenv.NeedJVM), and when not root (a failure under CI=true).
// Stop it in TestMain with Stop.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	testenv.NeedJVM(t)
	if os.Geteuid() != 0 {
		testenv.Skip(t, "a real node needs root (CI runs as root)")
	}
	for _, b := range []string{"kubelet", "kube-scheduler", "kube-proxy", "coredns", "containerd", "runc", "busybox"} {
		if _, err := nodeBinary(b); err != nil {
			testenv.Skip(t, err.Error())
		}
	}
	c := shared.Get(t, func() (*Cluster, error) {
		start := time.Now()
		if p := StatePath(); p != "" {
			c, err := Attach(context.Background(), p)
			if err == nil {
				t.Logf("cluster: attached to the test bed %s (%s, registry %s, logs in %s)", p, c.Server, c.Registry, c.Dir)
				return c, nil
			}
			if !errors.Is(err, bed.ErrNoBed) {
				t.Logf("cluster: not attaching to %s: %v", p, err)
			}
		}
		opts = append([]Option{WithLog(func(f string, a ...any) { t.Logf("cluster: "+f, a...) })}, opts...)
		c, err := Launch(context.Background(), opts...)
		if err != nil {
			return c, fmt.Errorf("cluster: %w", err) // Stop still stops what c holds
		}
		t.Logf("cluster: up in %s (%s, registry %s, logs in %s)", time.Since(start).Round(time.Millisecond), c.Server, c.Registry, c.Dir)
		return c, nil
	})
	if c.attached {
		c.hold(t)
	}
	return c
}

// Stop stops the test binary's cluster, if Start launched one (an attached
// test bed keeps running).
func Stop() { shared.Close(stop) }

// stop is Stop for the cluster Start made (nil when Launch failed early).
func stop(c *Cluster) {
	if c != nil && c.attached {
		// The wait for another binary's node tests, in all: what the
		// machine lock cost before the bed (issue 43).
		fmt.Fprintf(os.Stderr, "cluster: this binary waited %s for the test bed in all\n", useWait().Round(100*time.Millisecond))
	}
	if c != nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "cluster: stop: %v\n", err)
		}
	}
}

func nodeBinary(name string) (string, error) {
	switch name {
	case "kubelet", "kube-scheduler", "kube-proxy":
		return binary(name, "k8s-current")
	case "coredns":
		return binary(name, "coredns-current")
	case "etcd", "kube-apiserver", "kube-controller-manager":
		return binary(name, "k8s-current")
	case "busybox":
		if _, err := os.Stat(busybox); err != nil {
			return "", fmt.Errorf("%s not installed (apt-get install busybox-static; hack/infra.sh does)", busybox)
		}
		return busybox, nil
	}
	return binary(name)
}

// Launch starts a cluster and returns when the node is Ready and the
// default service account exists. On error, what it started is stopped.
func Launch(ctx context.Context, opts ...Option) (c *Cluster, err error) {
	o := &options{log: func(string, ...any) {}}
	for _, f := range opts {
		f(o)
	}
	c = &Cluster{Dir: o.dir}
	bins := map[string]string{}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "coredns", "containerd", "ctr", "docker-registry"} {
		p, err := nodeBinary(b)
		if err != nil {
			return nil, err
		}
		bins[b] = p
	}
	if c.lock, err = os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		return nil, err
	}
	o.log("waiting for %s (one cluster per machine)", lockFile)
	if err := syscall.Flock(int(c.lock.Fd()), syscall.LOCK_EX); err != nil {
		c.lock.Close()
		return nil, fmt.Errorf("lock %s: %w", lockFile, err)
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
			c = nil
		}
	}()
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "prebake-cluster-"); err != nil {
			return c, err
		}
		c.ownDir = true
	} else {
		// A previous cluster's state (it may have been killed): emptied.
		_ = unmountUnder(c.Dir)
		if err := os.RemoveAll(c.Dir); err != nil {
			return c, err
		}
		if err := os.MkdirAll(c.Dir, 0o700); err != nil {
			return c, err
		}
	}
	// The keys, tokens and kubeconfig in Dir are the cluster's: no other
	// user reads them.
	if err := os.Chmod(c.Dir, 0o700); err != nil {
		return c, err
	}
	c.Dir, _ = filepath.Abs(c.Dir)
	c.netnsAtUp = netnsNames()
	step := time.Now()
	lap := func(what string) {
		o.log("%s in %s", what, time.Since(step).Round(time.Millisecond))
		step = time.Now()
	}
	if err := c.network(); err != nil {
		return c, err
	}
	if err := guardInit(); err != nil {
		return c, err
	}
	if err := c.startRegistry(ctx, bins["docker-registry"]); err != nil {
		return c, err
	}
	lap("registry and images (" + c.Registry + ")")
	if err := c.startControlPlane(ctx, bins, o.privileged); err != nil {
		return c, err
	}
	lap("etcd, kube-apiserver, controller-manager and scheduler")
	if err := c.startDNS(ctx, bins["coredns"]); err != nil {
		return c, fmt.Errorf("cluster DNS on %s:53: %w", NodeIP, err)
	}
	if err := c.startNode(ctx, bins); err != nil {
		return c, err
	}
	lap("containerd, kubelet (node Ready) and kube-proxy")
	return c, nil
}

// network makes the pods' bridge with the node's address (the CNI bridge
// plugin then adds the pods' veths to it) and lets bridged traffic pass
// iptables (Services between pods on the bridge).
func (c *Cluster) network() error {
	_ = run("ip", "link", "del", Bridge) // a previous run killed before its Stop
	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", NodeIP + "/24", "dev", Bridge},
		{"link", "set", Bridge, "up"},
	} {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	for _, s := range []string{"/proc/sys/net/bridge/bridge-nf-call-iptables", "/proc/sys/net/ipv4/ip_forward"} {
		if err := os.WriteFile(s, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("sysctl %s: %w", s, err)
		}
	}
	return nil
}

func (c *Cluster) startRegistry(ctx context.Context, bin string) error {
	ports, err := testenv.FreePorts(1)
	if err != nil {
		return err
	}
	c.Registry = "127.0.0.1:" + strconv.Itoa(ports[0])
	if err := guardPorts(ports[0]); err != nil {
		return err
	}
	dir := c.path("registry")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := bed.WriteRegistryConfig(dir, c.Registry, ""); err != nil {
		return err
	}
	rp, err := bed.StartRegistryProcess(bin, dir, c.Registry, c.path("registry.log"))
	if err != nil {
		return err
	}
	c.procs = append(c.procs, rp)
	c.PauseImage = c.Registry + "/prebake/pause:3.10"
	c.TestImage = c.Registry + "/prebake/busybox:1.35"
	if err := pushPause(ctx, c.PauseImage); err != nil {
		return fmt.Errorf("pause image: %w", err)
	}
	if err := pushTestImage(ctx, c.TestImage); err != nil {
		return fmt.Errorf("test image: %w", err)
	}
	return nil
}

func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

func (c *Cluster) startControlPlane(ctx context.Context, bins map[string]string, privileged bool) error {
	cp, err := LaunchControlPlane(ctx, c.Dir, BindAddress(NodeIP), guardEtcd(),
		ServiceAccountIssuer("https://kubernetes.default.svc.cluster.local"),
		APIServerFlags("--kubelet-preferred-address-types=InternalIP", "--allow-privileged="+strconv.FormatBool(privileged)),
		beforeAPIServer(func(cp *ControlPlane) ([]string, error) {
			// The API server's identity towards the kubelet (which
			// authorizes it by webhook: system:masters may do everything).
			if err := cp.ca.issue(c.path("apiserver-kubelet-client.crt"), c.path("apiserver-kubelet-client.key"),
				pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}, nil,
				[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}); err != nil {
				return nil, err
			}
			return []string{"--kubelet-client-certificate=" + c.path("apiserver-kubelet-client.crt"),
				"--kubelet-client-key=" + c.path("apiserver-kubelet-client.key"),
				"--kubelet-certificate-authority=" + cp.CAFile}, nil
		}))
	if err != nil {
		return err
	}
	// Stop stops them by name, in the node's order.
	c.procs = append(c.procs, cp.procs...)
	c.ca, c.CAFile, c.Token, c.Kubeconfig, c.Server = cp.ca, cp.CAFile, cp.Token, cp.Kubeconfig, cp.Server
	c.Config, c.Client, c.etcdURL = cp.Config, cp.Client, cp.EtcdURL
	if err := c.ca.serving(c.path("kubelet.crt"), c.path("kubelet.key"), []string{NodeIP}, NodeName); err != nil {
		return err
	}
	ports, err := testenv.FreePorts(2)
	if err != nil {
		return err
	}
	if _, err := c.start("kube-controller-manager", bins["kube-controller-manager"],
		"--kubeconfig="+c.Kubeconfig, "--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[0]),
		"--service-account-private-key-file="+c.path("sa.key"), "--root-ca-file="+c.CAFile,
		"--use-service-account-credentials=false", "--allocate-node-cidrs=false", "--v=1"); err != nil {
		return err
	}
	if _, err := c.start("kube-scheduler", bins["kube-scheduler"],
		"--kubeconfig="+c.Kubeconfig, "--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[1]), "--v=1"); err != nil {
		return err
	}
	return nil
}

func (c *Cluster) startNode(ctx context.Context, bins map[string]string) error {
	ports, err := testenv.FreePorts(5)
	if err != nil {
		return err
	}
	// containerd's streaming server (exec, attach, port-forward) is for
	// the kubelet alone.
	if err := guardPorts(ports[0]); err != nil {
		return err
	}
	cd := c.path("containerd")
	c.containerd = filepath.Join(cd, "containerd.sock")
	for _, d := range []string{"cni", "certs.d/" + c.Registry} {
		if err := os.MkdirAll(filepath.Join(cd, d), 0o755); err != nil {
			return err
		}
	}
	// Trap 1 of test-infra.md: root here lacks CAP_SYS_RESOURCE, so the
	// CRI must not give the sandbox a negative oom_score_adj.
	cfg := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "%[7]d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[8]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[9]q
`, filepath.Join(cd, "root"), filepath.Join(cd, "state"), c.containerd, c.containerd+".ttrpc", filepath.Join(cd, "opt"),
		c.PauseImage, ports[0], filepath.Join(cd, "cni"), filepath.Join(cd, "certs.d"))
	hosts := fmt.Sprintf("server = \"http://%[1]s\"\n[host.\"http://%[1]s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", c.Registry)
	cni := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "prebake", "plugins": [
 {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}}]}
`, Bridge, PodCIDR, NodeIP, filepath.Join(cd, "ipam"))
	for name, content := range map[string]string{
		"config.toml":                           cfg,
		"certs.d/" + c.Registry + "/hosts.toml": hosts,
		"cni/10-prebake.conflist":               cni,
	} {
		if err := os.WriteFile(filepath.Join(cd, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if _, err := c.start("containerd", bins["containerd"], "--config", filepath.Join(cd, "config.toml")); err != nil {
		return err
	}
	if err := c.waitFor("containerd socket", "containerd", 30*time.Second, func() bool {
		return exec.Command(bins["ctr"], "--address", c.containerd, "version").Run() == nil
	}); err != nil {
		return err
	}
	// Trap 2: the API server proxies pods/log to the node's InternalIP and
	// the kubelet's port, so the kubelet serves there, with a certificate
	// for that address.
	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
port: %[3]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[4]d
tlsCertFile: %[5]q
tlsPrivateKeyFile: %[6]q
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: %[7]q}}
authorization: {mode: Webhook}
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", nodefs.inodesFree: "1%%", imagefs.available: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
clusterDomain: cluster.local
clusterDNS: [%[2]s]
resolvConf: /etc/resolv.conf
staticPodPath: ""
`, c.containerd, NodeIP, ports[1], ports[2], c.path("kubelet.crt"), c.path("kubelet.key"), c.CAFile)
	c.kubeletURL = fmt.Sprintf("https://%s:%d", NodeIP, ports[1])
	if err := os.WriteFile(c.path("kubelet.yaml"), []byte(kubelet), 0o644); err != nil {
		return err
	}
	if _, err := c.start("kubelet", bins["kubelet"], "--config="+c.path("kubelet.yaml"), "--kubeconfig="+c.Kubeconfig,
		"--root-dir="+c.path("kubelet"), "--hostname-override="+NodeName, "--node-ip="+NodeIP, "--v=1"); err != nil {
		return err
	}
	if _, err := c.start("kube-proxy", bins["kube-proxy"], "--kubeconfig="+c.Kubeconfig, "--hostname-override="+NodeName,
		"--proxy-mode=iptables", "--cluster-cidr="+PodCIDR, "--bind-address="+NodeIP,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(ports[3]), "--healthz-bind-address=127.0.0.1:"+strconv.Itoa(ports[4]),
		"--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0", "--v=1"); err != nil {
		return err
	}
	if err := c.waitFor("node "+NodeName+" Ready", "kubelet", 120*time.Second, func() bool {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	return c.waitFor("the default service account", "kube-controller-manager", 60*time.Second, func() bool {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

// Stop stops the cluster: the pods' containers, the servers (the node
// first, etcd last), the node's mounts, network namespaces and iptables
// rules, and the bridge; then removes Dir unless WithDir chose it.
func (c *Cluster) Stop() error {
	if c.attached {
		return nil
	}
	var errs []error
	byName := map[string]*testenv.Process{}
	for _, p := range c.procs {
		byName[p.Name] = p
	}
	stop := func(names ...string) {
		for _, n := range names {
			if p := byName[n]; p != nil {
				p.Stop(0, 15*time.Second, nil)
			}
		}
	}
	stop("kubelet")
	if byName["containerd"] != nil && !byName["containerd"].Exited() {
		c.killContainers()
	}
	stop("containerd", "kube-proxy")
	if byName["kubelet"] != nil || byName["kube-proxy"] != nil {
		errs = append(errs, cleanIptables())
	}
	stop("coredns", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd", "registry")
	if c.Dir != "" {
		errs = append(errs, unmountUnder(c.Dir))
	}
	for n := range netnsNames() {
		if !c.netnsAtUp[n] && strings.HasPrefix(n, "cni-") {
			p := filepath.Join("/var/run/netns", n)
			_ = syscall.Unmount(p, syscall.MNT_DETACH)
			_ = os.Remove(p)
		}
	}
	_ = run("ip", "link", "del", Bridge)
	unguard()
	removeCgroups("kubepods")
	if c.ownDir && os.Getenv("PREBAKE_CLUSTER_KEEP") == "" {
		errs = append(errs, os.RemoveAll(c.Dir))
	}
	if c.lock != nil {
		c.lock.Close()
	}
	return errors.Join(errs...)
}

// killContainers kills and removes every container of the node (the pod
// sandboxes included), so that no shim or container outlives the cluster.
func (c *Cluster) killContainers() {
	ctr, err := nodeBinary("ctr")
	if err != nil {
		return
	}
	base := []string{"--address", c.containerd, "--namespace", "k8s.io"}
	out, _ := exec.Command(ctr, append(base, "task", "ls", "-q")...).Output()
	for _, id := range strings.Fields(string(out)) {
		_ = exec.Command(ctr, append(base, "task", "kill", "-s", "SIGKILL", id)...).Run()
	}
	for _, id := range strings.Fields(string(out)) {
		for i := 0; i < 20; i++ {
			if exec.Command(ctr, append(base, "task", "delete", id)...).Run() == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	out, _ = exec.Command(ctr, append(base, "container", "ls", "-q")...).Output()
	for _, id := range strings.Fields(string(out)) {
		_ = exec.Command(ctr, append(base, "container", "delete", id)...).Run()
	}
}

// netnsNames are the named network namespaces (CNI's pods are cni-…).
func netnsNames() map[string]bool {
	m := map[string]bool{}
	ents, _ := os.ReadDir("/var/run/netns")
	for _, e := range ents {
		m[e.Name()] = true
	}
	return m
}

// unmountUnder unmounts every mount below dir (the kubelet's volumes,
// containerd's snapshots and shm), deepest first.
func unmountUnder(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			mounts = append(mounts, f[4])
		}
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		if err := syscall.Unmount(mounts[i], syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mounts[i], err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroups removes the kubelet's (empty) cgroup tree name from every
// v1 controller and the unified hierarchy, deepest first; what is still in
// use stays.
func removeCgroups(name string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	if st, err := os.Stat("/sys/fs/cgroup/" + name); err == nil && st.IsDir() {
		roots = append(roots, "/sys/fs/cgroup/"+name)
	}
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = syscall.Rmdir(dirs[i])
		}
	}
}

// cleanIptables removes the kubelet's and kube-proxy's iptables rules (every
// KUBE-* chain and the jumps to them), IPv4 and IPv6: one cluster runs on
// the machine at a time, so they are all this cluster's.
func cleanIptables() error {
	var errs []error
	for _, tool := range []string{"iptables", "ip6tables"} {
		bin, err := binary(tool)
		if err != nil {
			continue
		}
		for _, table := range []string{"nat", "filter", "mangle"} {
			out, err := exec.Command(bin, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			var chains []string
			for _, line := range strings.Split(string(out), "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
					chains = append(chains, f[1])
				case len(f) > 2 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && strings.Contains(line, "-j KUBE-"):
					// A jump from a built-in chain: delete that rule. The
					// rule's words are iptables' own quoting-free output
					// except comments, which -S quotes.
					args := append([]string{"-w", "-t", table, "-D"}, splitRule(line[3:])...)
					if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s %s: %v: %s", tool, strings.Join(args, " "), err, out))
					}
				}
			}
			for _, c := range chains {
				_ = exec.Command(bin, "-w", "-t", table, "-F", c).Run()
			}
			for _, c := range chains {
				if out, err := exec.Command(bin, "-w", "-t", table, "-X", c).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s -t %s -X %s: %v: %s", tool, table, c, err, out))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// splitRule splits a rule of iptables -S into words, honouring its double
// quotes (comments).
func splitRule(s string) []string {
	var words []string
	var cur strings.Builder
	inQuote, started := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && inQuote && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case ch == '"':
			inQuote, started = !inQuote, true
		case ch == ' ' && !inQuote:
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(ch)
			started = true
		}
	}
	if started {
		words = append(words, cur.String())
	}
	return words
}
