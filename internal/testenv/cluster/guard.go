package cluster

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// The test cluster is not open to the machine's other users (issue 41, H2):
//   - etcd serves TLS and asks every client and peer for a certificate of the
//     cluster's CA (SecureEtcd); the keys live in the cluster's 0700 Dir;
//   - the kubelet authenticates (x509 of the CA, tokens by TokenReview) and
//     authorizes by SubjectAccessReview (webhook), anonymous access off; the
//     API server reaches it with a client certificate;
//   - the registry and the other loopback ports only root's processes (the
//     node, the tests) use are closed to every other uid by an iptables
//     owner match in the chain guardChain (guardPorts);
//   - privileged pods are refused unless WithPrivileged asks for them.

// guardChain is the filter table's chain, jumped to from OUTPUT, that
// rejects other uids' connections to the cluster's private ports.
const guardChain = "PREBAKE-GUARD"

// guardInit makes guardChain (empty) and OUTPUT's jump to it, replacing
// what a killed run may have left.
func guardInit() error {
	unguard()
	return iptables([]string{"-N", guardChain}, []string{"-I", "OUTPUT", "1", "-j", guardChain})
}

// guardPorts closes each 127.0.0.1 port to every uid but root's.
func guardPorts(ports ...int) error {
	var cmds [][]string
	for _, p := range ports {
		cmds = append(cmds, []string{"-A", guardChain, "-p", "tcp", "-d", "127.0.0.1", "--dport", strconv.Itoa(p),
			"-m", "owner", "!", "--uid-owner", "0", "-j", "REJECT", "--reject-with", "tcp-reset"})
	}
	return iptables(cmds...)
}

func iptables(cmds ...[]string) error {
	ipt, err := binary("iptables")
	if err != nil {
		return err
	}
	for _, args := range cmds {
		if out, err := exec.Command(ipt, append([]string{"-w"}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("iptables %v: %v: %s", args, err, out)
		}
	}
	return nil
}

// unguard removes guardChain and OUTPUT's jump to it, if present.
func unguard() {
	ipt, err := binary("iptables")
	if err != nil {
		return
	}
	for exec.Command(ipt, "-w", "-D", "OUTPUT", "-j", guardChain).Run() == nil {
	}
	_ = exec.Command(ipt, "-w", "-F", guardChain).Run()
	_ = exec.Command(ipt, "-w", "-X", guardChain).Run()
}

// SecureEtcd writes, into dir, a CA, etcd's serving and peer certificate
// and a client certificate for the API server, and returns the arguments
// that make etcd serve its client and peer URLs on 127.0.0.1 over TLS with
// client-certificate authentication, and those that make kube-apiserver use
// it. Whoever cannot read dir (make it 0700) cannot talk to etcd.
func SecureEtcd(dir string, clientPort, peerPort int) (etcdArgs, apiArgs []string, err error) {
	ca, err := newPKI()
	if err != nil {
		return nil, nil, err
	}
	path := func(n string) string { return filepath.Join(dir, n) }
	if err := os.WriteFile(path("etcd-ca.crt"), ca.caPEM(), 0o600); err != nil {
		return nil, nil, err
	}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if err := ca.issue(path("etcd.crt"), path("etcd.key"), pkix.Name{CommonName: "etcd"}, []string{"127.0.0.1"}, both); err != nil {
		return nil, nil, err
	}
	if err := ca.issue(path("etcd-client.crt"), path("etcd-client.key"), pkix.Name{CommonName: "kube-apiserver-etcd-client"}, nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}); err != nil {
		return nil, nil, err
	}
	client := fmt.Sprintf("https://127.0.0.1:%d", clientPort)
	peer := fmt.Sprintf("https://127.0.0.1:%d", peerPort)
	etcdArgs = []string{
		"--data-dir", path("etcd"), "--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "default=" + peer,
		"--cert-file", path("etcd.crt"), "--key-file", path("etcd.key"), "--client-cert-auth", "--trusted-ca-file", path("etcd-ca.crt"),
		"--peer-cert-file", path("etcd.crt"), "--peer-key-file", path("etcd.key"), "--peer-client-cert-auth",
		"--peer-trusted-ca-file", path("etcd-ca.crt"), "--unsafe-no-fsync", "--log-level", "warn",
	}
	apiArgs = []string{"--etcd-servers=" + client, "--etcd-cafile=" + path("etcd-ca.crt"),
		"--etcd-certfile=" + path("etcd-client.crt"), "--etcd-keyfile=" + path("etcd-client.key")}
	return etcdArgs, apiArgs, nil
}

// issue writes a certificate for subject (IP SANs ips) with the given
// extended key usages, signed by the CA, and its key (0600).
func (p *pki) issue(certFile, keyFile string, subject pkix.Name, ips []string, usage []x509.ExtKeyUsage) error {
	der, key, err := p.signFor(subject, ips, nil, usage)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeKey(keyFile, key)
}
