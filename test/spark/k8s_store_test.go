package spark

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	k8scluster "github.com/prebake/prebake/internal/testenv/cluster"
	"github.com/prebake/prebake/s3store/s3test"
)

// TestK8sJourneyStore is scenario 3 of issue 25, the store path: `prebake
// submit --store s3://… --url-style presigned` on versitygw, behind a
// counting https proxy on the node's address (where pods reach it; its
// certificate is signed by the cluster's CA; the proxy keeps the Host
// header the URLs are signed for). The team's image is used unchanged; the
// driver fetches the jars from the store over https with the presigned URLs
// (the pods hold no S3 credentials, and the bucket is private), the
// executor runs the Avro tasks, 0 Maven requests after prebake's resolve.
// The executor does not ask the store: Spark 3.5's cluster-mode driver
// replaces spark.jars by its downloaded copies, which executors fetch from
// the driver's file server (measured: the driver GETs each jar twice, the
// executor none).
func TestK8sJourneyStore(t *testing.T) {
	t.Parallel() // the journeys overlap, two at a time (-parallel)
	j := newJourney(t, "journey-store")
	gw := s3test.Start(t)
	bucket := gw.Bucket(t, "journey-store")
	cert, err := j.c.ServingCert(k8scluster.NodeIP)
	if err != nil {
		t.Fatal(err)
	}
	store := testenv.CountingProxy(t, gw.Endpoint, testenv.ProxyListen(k8scluster.NodeIP+":0"), testenv.ProxyPreserveHost(), testenv.ProxyTLS(cert))
	// prebake trusts the cluster's CA through AWS_CA_BUNDLE, the pods'
	// JVMs through a trust store on the /data hostPath.
	env := append(j.env, "AWS_ACCESS_KEY_ID="+s3test.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3test.SecretKey, "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_CA_BUNDLE="+j.c.CAFile)
	javac, err := exec.LookPath("javac")
	if err != nil {
		testenv.Skip(t, "javac (and its keytool) not installed: "+err.Error())
	}
	keytool := filepath.Join(filepath.Dir(javac), "keytool")
	if out, err := exec.Command(keytool, "-importcert", "-noprompt", "-alias", "prebake-test-ca", "-file", j.c.CAFile,
		"-keystore", filepath.Join(j.data, "truststore.p12"), "-storetype", "PKCS12", "-storepass", "prebake-test").CombinedOutput(); err != nil {
		t.Fatalf("keytool: %v\n%s", err, out)
	}
	if err := os.Chmod(filepath.Join(j.data, "truststore.p12"), 0o644); err != nil { // user 185
		t.Fatal(err)
	}
	trust := "-Djavax.net.ssl.trustStore=/data/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=prebake-test"
	r := prebakeWithin(t, env, 8*time.Minute, j.args([]string{"--store", "s3://" + bucket + "/prebake",
		"--endpoint", strings.TrimSuffix(store.URL, "/"), "--path-style", "--url-style", "presigned", "--expires", "1h"},
		[]string{"spark.executor.instances=1", "spark.driver.extraJavaOptions=" + trust, "spark.executor.extraJavaOptions=" + trust},
		"avro", "/data/out.avro")...)
	driver, log := j.checkAvroJourney(t, r, j.image, 1)
	j.noMavenAfterResolve(t, driver, true)
	role := map[string]string{driver.Status.PodIP: "driver"}
	for _, e := range j.executors(t) {
		role[e.Status.PodIP] = "executor"
	}
	fetched := map[string][]string{} // role → jars it GOT from the store
	for _, q := range store.Requests() {
		if q.Method != http.MethodGet || !strings.HasSuffix(q.Path, ".jar") {
			continue
		}
		who := role[q.RemoteIP]
		if who == "" {
			who = "host " + q.RemoteIP
		}
		fetched[who] = append(fetched[who], q.Path[strings.LastIndex(q.Path, "/")+1:])
	}
	for _, jars := range fetched {
		sort.Strings(jars)
	}
	t.Logf("jars fetched from the store: %v", fetched)
	if !containsSub(fetched["driver"], "spark-avro_2.12-"+sparkVersion+".jar") {
		t.Errorf("the driver did not fetch spark-avro from the store (fetched: %v)\ndriver log:\n%s", fetched, log)
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
