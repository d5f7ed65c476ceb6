package cluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

func (c *Cluster) start(name, bin string, args ...string) (*testenv.Process, error) {
	p, err := startProc(c.Dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// startProc starts bin with its output in dir/name.log (testenv.StartProcess).
func startProc(dir, name, bin string, args ...string) (*testenv.Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	return testenv.StartProcess(name, filepath.Join(dir, name+".log"), cmd)
}

// tail is the last n lines of the named server's log.
func (c *Cluster) tail(name string, n int) string { return tailLog(c.Dir, name, n) }

// tailLog is the last n lines of dir/name.log.
func tailLog(dir, name string, n int) string {
	return testenv.TailFile(filepath.Join(dir, name+".log"), n)
}

// waitFor polls ok every 200ms until it returns true, or fails after d
// with the tail of the named server's log (or when that server exited).
func (c *Cluster) waitFor(what, server string, d time.Duration, ok func() bool) error {
	return waitFor(c.procs, what, server, d, ok)
}

// waitFor is Cluster.waitFor for the servers procs.
func waitFor(procs []*testenv.Process, what, server string, d time.Duration, ok func() bool) error {
	for _, p := range procs {
		if p.Name == server {
			return p.WaitReady(what, d, 200*time.Millisecond, ok)
		}
	}
	return fmt.Errorf("waiting for %s: no server %s was started", what, server)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// binary finds a server binary: $PREBAKE_<NAME>, then the cache
// directories that hack/infra.d builds into, then PATH.
func binary(name string, cacheDirs ...string) (string, error) {
	env := "PREBAKE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	for _, d := range cacheDirs {
		p := filepath.Join(testenv.CacheDir(), d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin"} { // PATH may lack the sbin directories
		if p := filepath.Join(d, name); isExec(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not installed (hack/infra.sh builds it; or set %s)", name, env)
}

// pki is the cluster's CA and the certificates it signs.
type pki struct {
	caCert *x509.Certificate
	caKey  *rsa.PrivateKey
}

func newPKI() (*pki, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "prebake-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &pki{caCert: cert, caKey: key}, nil
}

func (p *pki) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.caCert.Raw})
}

// serving writes a serving certificate for the IPs and DNS names (the
// first is the common name) to certFile and keyFile.
func (p *pki) serving(certFile, keyFile string, ips []string, names ...string) error {
	der, key, err := p.sign(ips, names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeKey(keyFile, key)
}

// ServingCert is a serving certificate for ips signed by the cluster's CA
// (CAFile): a test's server on the node's address that pods and prebake
// reach over https.
func (c *Cluster) ServingCert(ips ...string) (tls.Certificate, error) {
	der, key, err := c.ca.sign(ips, nil)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func (p *pki) sign(ips, names []string) ([]byte, *rsa.PrivateKey, error) {
	return p.signFor(pkix.Name{CommonName: ips[0]}, ips, names, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
}

// signFor makes a key and a certificate of the CA for subject, with the IP
// and DNS SANs and the extended key usages given.
func (p *pki) signFor(subject pkix.Name, ips, names []string, usage []x509.ExtKeyUsage) ([]byte, *rsa.PrivateKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: usage,
		DNSNames: names,
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	return der, key, err
}

func writeKey(path string, key *rsa.PrivateKey) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
}

// saKeys writes the service-account signing key pair.
func saKeys(keyFile, pubFile string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writeKey(keyFile, key); err != nil {
		return err
	}
	return os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// run runs an admin tool (ip, iptables) found like the servers.
func run(name string, args ...string) error {
	bin, err := binary(name)
	if err != nil {
		return err
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
