package spark

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/s3store/s3test"
)

// nodeStore is a private versitygw bucket behind a counting https proxy on
// the node's address, where pods reach it (its certificate is signed by
// the cluster's CA; the proxy keeps the Host header that presigned URLs
// are signed for): the store of the store journeys.
type nodeStore struct {
	proxy *testenv.Proxy
	// env is the journey's environment plus the S3 credentials, and the
	// cluster's CA for prebake (AWS_CA_BUNDLE).
	env []string
	// flags are prebake's --store, --endpoint (the proxy) and --path-style.
	flags []string
	// trust is the JVM options of a pod that fetches from the store: a
	// trust store of the cluster's CA on the /data hostPath.
	trust string
}

func (j *journey) nodeStore(t *testing.T, bucketName string) *nodeStore {
	t.Helper()
	gw := s3test.Start(t)
	bucket := gw.Bucket(t, bucketName)
	cert, err := j.c.ServingCert(k8scluster.NodeIP)
	if err != nil {
		t.Fatal(err)
	}
	s := &nodeStore{proxy: testenv.CountingProxy(t, gw.Endpoint, testenv.ProxyListen(k8scluster.NodeIP+":0"), testenv.ProxyPreserveHost(), testenv.ProxyTLS(cert))}
	s.env = append(append([]string(nil), j.env...), "AWS_ACCESS_KEY_ID="+s3test.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3test.SecretKey, "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_CA_BUNDLE="+j.c.CAFile)
	s.flags = []string{"--store", "s3://" + bucket + "/prebake", "--endpoint", strings.TrimSuffix(s.proxy.URL, "/"), "--path-style"}
	javac, err := exec.LookPath("javac")
	if err != nil {
		testenv.Skip(t, "javac (and its keytool) not installed: "+err.Error())
	}
	ts := filepath.Join(j.data, "truststore.p12")
	if out, err := exec.Command(filepath.Join(filepath.Dir(javac), "keytool"), "-importcert", "-noprompt", "-alias", "prebake-test-ca", "-file", j.c.CAFile,
		"-keystore", ts, "-storetype", "PKCS12", "-storepass", "prebake-test").CombinedOutput(); err != nil {
		t.Fatalf("keytool: %v\n%s", err, out)
	}
	if err := os.Chmod(ts, 0o644); err != nil { // user 185
		t.Fatal(err)
	}
	s.trust = "-Djavax.net.ssl.trustStore=/data/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=prebake-test"
	return s
}
