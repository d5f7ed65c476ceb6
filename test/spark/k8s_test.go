package spark

import (
	"testing"
	"time"
)

// TestK8sClusterAvroFromCentral is the first journey of issue 25 on the
// real node: `prebake submit --image-target <local registry> -- --master
// k8s://… --deploy-mode cluster --packages spark-avro …` resolves spark-avro
// from Maven Central (as this machine reaches it, through a counting proxy
// on the node's address), bakes it onto the team's image, and the real
// spark-submit runs the job: the driver pod runs the baked image, two
// executor pods write and read Avro (a hostPath shared by the pods of the
// one node), prebake exits 0, and neither Spark nor the pods asked Maven for
// anything: the proxy saw prebake's resolve only.
func TestK8sClusterAvroFromCentral(t *testing.T) {
	j := newJourney(t, "avro-journey")
	r := prebakeWithin(t, j.env, 9*time.Minute, j.args(
		[]string{"--image-target", j.c.Registry + "/spark-jobs"}, nil, "avro", "/data/out.avro")...)
	driver, _ := j.checkAvroJourney(t, r, j.c.Registry+"/spark-jobs", 2)
	j.noMavenAfterResolve(t, driver, true)
}
