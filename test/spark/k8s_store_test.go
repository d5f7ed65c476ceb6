package spark

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
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
	st := j.nodeStore(t, "journey-store")
	store, env, trust := st.proxy, st.env, st.trust
	r := prebakeWithin(t, env, 8*time.Minute, j.args(append(st.flags, "--url-style", "presigned", "--expires", "1h"),
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
