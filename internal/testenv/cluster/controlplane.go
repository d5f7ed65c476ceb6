package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/prebake/prebake/internal/testenv"
)

// ControlPlane is a running etcd + kube-apiserver. LaunchControlPlane is
// the one launcher of both (issue 43): the real node's (Launch) and the
// API-server-only tests' (submit/k8s's shared API server, a namespace per
// test) use it with their own options.
type ControlPlane struct {
	// Dir holds the servers' keys, certificates, data and logs
	// (<name>.log); it is 0700.
	Dir string
	// Server is the API server's URL (https://<bind address>:<port>).
	Server string
	// CAFile is the CA that signed the API server's certificate; it is
	// also the API server's client CA.
	CAFile string
	// Token is a bearer token of system:masters.
	Token string
	// Kubeconfig is a kubeconfig file for Server as the admin (Token).
	Kubeconfig string
	// Config is the admin client's configuration; Client is the client.
	Config *rest.Config
	Client kubernetes.Interface
	// EtcdURL is etcd's client URL (TLS, client certificates: SecureEtcd).
	EtcdURL string
	// Ready is how long the launch took, until /readyz answered ok.
	Ready time.Duration

	ca    *pki
	procs []*testenv.Process
}

// ControlPlaneOption configures LaunchControlPlane.
type ControlPlaneOption func(*cpOptions)

type cpOptions struct {
	bind        string
	issuer      string
	serviceCIDR string
	flags       []string
	guardEtcd   bool
	prepare     func(cp *ControlPlane) ([]string, error)
}

// BindAddress is the address the API server listens on (127.0.0.1 unless
// given); its serving certificate names it, 127.0.0.1 and the kubernetes
// Service's names.
func BindAddress(ip string) ControlPlaneOption { return func(o *cpOptions) { o.bind = ip } }

// ServiceAccountIssuer is the issuer of the service-account tokens (the
// API server's URL unless given).
func ServiceAccountIssuer(url string) ControlPlaneOption {
	return func(o *cpOptions) { o.issuer = url }
}

// APIServerFlags adds flags to kube-apiserver's command line.
func APIServerFlags(flags ...string) ControlPlaneOption {
	return func(o *cpOptions) { o.flags = append(o.flags, flags...) }
}

// guardEtcd keeps etcd's ports from every user but root (guardPorts).
func guardEtcd() ControlPlaneOption { return func(o *cpOptions) { o.guardEtcd = true } }

// beforeAPIServer runs f after the CA and etcd exist and before
// kube-apiserver starts; f's flags are added to kube-apiserver's.
func beforeAPIServer(f func(cp *ControlPlane) ([]string, error)) ControlPlaneOption {
	return func(o *cpOptions) { o.prepare = f }
}

// LaunchControlPlane starts etcd (SecureEtcd) and kube-apiserver (token
// and RBAC authorization, anonymous refused) with their files in dir and
// returns when /readyz answers ok; on an error nothing is left running.
// The binaries come from $PREBAKE_ETCD and $PREBAKE_KUBE_APISERVER, or
// the cache hack/infra.d/50-k8s.sh builds. Stop stops them.
func LaunchControlPlane(ctx context.Context, dir string, opts ...ControlPlaneOption) (cp *ControlPlane, err error) {
	start := time.Now()
	o := &cpOptions{bind: "127.0.0.1", serviceCIDR: ServiceCIDR}
	for _, f := range opts {
		f(o)
	}
	etcdBin, err := nodeBinary("etcd")
	if err != nil {
		return nil, err
	}
	apiBin, err := nodeBinary("kube-apiserver")
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	// The keys and tokens in dir are the control plane's: no other user
	// reads them, nor talks to etcd (issue 41, H2).
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	cp = &ControlPlane{Dir: dir, CAFile: filepath.Join(dir, "ca.crt"), Token: randHex(16), Kubeconfig: filepath.Join(dir, "kubeconfig")}
	defer func() {
		if err != nil {
			cp.Stop(func(string, ...any) {})
			cp = nil
		}
	}()
	path := func(name string) string { return filepath.Join(dir, name) }
	if cp.ca, err = newPKI(); err != nil {
		return cp, err
	}
	if err := os.WriteFile(cp.CAFile, cp.ca.caPEM(), 0o644); err != nil {
		return cp, err
	}
	// For the binaries that attach to a served node (ServingCert).
	if err := writeKey(path("ca.key"), cp.ca.caKey); err != nil {
		return cp, err
	}
	ips := []string{o.bind, kubernetesServiceIP}
	if o.bind != "127.0.0.1" {
		ips = append(ips, "127.0.0.1")
	}
	if err := cp.ca.serving(path("apiserver.crt"), path("apiserver.key"), ips,
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"); err != nil {
		return cp, err
	}
	if err := saKeys(path("sa.key"), path("sa.pub")); err != nil {
		return cp, err
	}
	if err := os.WriteFile(path("tokens.csv"), []byte(cp.Token+`,prebake-admin,1001,"system:masters"`+"\n"), 0o600); err != nil {
		return cp, err
	}
	ports, err := testenv.FreePorts(3)
	if err != nil {
		return cp, err
	}
	etcdArgs, apiEtcdArgs, err := SecureEtcd(dir, ports[0], ports[1])
	if err != nil {
		return cp, err
	}
	if o.guardEtcd {
		if err := guardPorts(ports[0], ports[1]); err != nil {
			return cp, err
		}
	}
	cp.EtcdURL = fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	if err := cp.start("etcd", etcdBin, etcdArgs...); err != nil {
		return cp, err
	}
	cp.Server = fmt.Sprintf("https://%s:%d", o.bind, ports[2])
	if o.issuer == "" {
		o.issuer = cp.Server
	}
	args := append(apiEtcdArgs,
		"--bind-address="+o.bind, "--secure-port="+strconv.Itoa(ports[2]),
		"--tls-cert-file="+path("apiserver.crt"), "--tls-private-key-file="+path("apiserver.key"),
		"--client-ca-file="+cp.CAFile,
		"--token-auth-file="+path("tokens.csv"), "--anonymous-auth=false", "--authorization-mode=RBAC",
		"--service-account-issuer="+o.issuer, "--service-account-key-file="+path("sa.pub"),
		"--service-account-signing-key-file="+path("sa.key"), "--service-cluster-ip-range="+o.serviceCIDR,
		"--enable-priority-and-fairness=false", "--v=0")
	if o.bind != "127.0.0.1" {
		// A loopback address is no endpoint of the kubernetes Service.
		args = append(args, "--advertise-address="+o.bind)
	}
	if o.prepare != nil {
		more, err := o.prepare(cp)
		if err != nil {
			return cp, err
		}
		args = append(args, more...)
	}
	if err := cp.start("kube-apiserver", apiBin, append(args, o.flags...)...); err != nil {
		return cp, err
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: prebake, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: prebake, context: {cluster: prebake, user: admin, namespace: default}}]
current-context: prebake
`, cp.Server, cp.CAFile, cp.Token)
	if err := os.WriteFile(cp.Kubeconfig, []byte(kc), 0o600); err != nil {
		return cp, err
	}
	if cp.Config, err = clientcmd.BuildConfigFromFlags("", cp.Kubeconfig); err != nil {
		return cp, err
	}
	// No client-side throttling to speak of (5 QPS by default): the tests'
	// kubelets and waits poll.
	cp.Config.QPS, cp.Config.Burst = 200, 400
	if cp.Client, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return cp, err
	}
	if err := waitFor(cp.procs, "kube-apiserver /readyz", "kube-apiserver", 120*time.Second, func() bool {
		body, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok"
	}); err != nil {
		return cp, err
	}
	cp.Ready = time.Since(start)
	return cp, nil
}

func (cp *ControlPlane) start(name, bin string, args ...string) error {
	p, err := startProc(cp.Dir, name, bin, args...)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// Stop stops kube-apiserver, then etcd (SIGTERM, SIGKILL after 15 s), and
// reports a server that had exited on its own to logf. It leaves Dir.
func (cp *ControlPlane) Stop(logf func(format string, args ...any)) {
	var errs []error
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		if p.Exited() {
			errs = append(errs, fmt.Errorf("%s had exited:\n%s", p.Name, testenv.TailFile(p.Log, 10)))
		}
		p.Stop(0, 15*time.Second, nil)
	}
	cp.procs = nil
	if err := errors.Join(errs...); err != nil {
		logf("control plane: %v", err)
	}
}
