package rewrite

import (
	"sort"
	"strconv"
	"strings"

	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// clusterReach warns when a cluster-mode driver is handed jar URLs it
// cannot read: file: URLs (a file:// store) name this host's disk.
func (w *rewriter) clusterReach(j *Jars) {
	if msg := fileURLsWarning(j); msg != "" {
		w.warnKind(WarnFileURLs, "%s cluster mode: %s", w.kind, msg)
	}
}

// imageReach warns when the image set for the cluster is a local OCI
// layout, which no node can pull.
func (w *rewriter) imageReach() {
	for _, ref := range []string{w.o.image, w.o.driverImage, w.o.executorImage} {
		if msg := layoutImageWarning(ref); msg != "" {
			w.warnKind(WarnLayoutImage, "%s", msg)
			return
		}
	}
}

// fileURLsWarning is the warning for cluster URLs that are file: URLs.
func fileURLsWarning(j *Jars) string {
	for _, u := range j.Cluster {
		if strings.HasPrefix(u, "file:") {
			return "the jars are file: URLs from " + redact.URL(j.From) + ", which the driver and executors can read only if that directory is mounted at the same path on every node; use an s3:// store or an image"
		}
	}
	return ""
}

// layoutImageWarning is the warning for an image that is an OCI layout.
func layoutImageWarning(ref string) string {
	if !strings.HasPrefix(ref, "oci:") {
		return ""
	}
	return ref + ": an OCI layout on this host, not an image a node can pull; push it to a registry and use that reference"
}

// readConf adds the conf the cluster needs to read the jar URLs (an
// S3-compatible store's endpoint and path style), unless the user set it.
func (w *rewriter) readConf(j *Jars) {
	keys := make([]string, 0, len(j.Conf))
	for k := range j.Conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.items = append(w.items, &managed{key: k, replace: j.Conf[k], onlyIfUnset: true,
			reason: "the jars come from " + redact.URL(j.From) + ", and Spark's S3A filesystem needs this to read them"})
	}
}

// AvoidDownloadSchemes is the K8s conf (Spark 4.0+, SPARK-47475) whose
// schemes' jars the driver pod passes to the executors as they are,
// instead of downloading them and serving them itself.
const AvoidDownloadSchemes = "spark.kubernetes.jars.avoidDownloadSchemes"

// avoidDownload sets AvoidDownloadSchemes to s3a when the cluster jars are
// a store's s3a:// URLs, so that each executor fetches them from the store,
// unless the user set it or the cluster's Spark is known to predate 4.0
// (WithSparkVersion, else the tag of an Apache Spark driver image).
func (w *rewriter) avoidDownload(j *Jars) {
	s3a := false
	for _, u := range j.Cluster {
		s3a = s3a || strings.HasPrefix(u, "s3a://")
	}
	v := w.o.sparkVersion
	if v == "" {
		img, _, _ := w.s.Conf("spark.kubernetes.driver.container.image")
		if img == "" {
			img, _, _ = w.s.Conf("spark.kubernetes.container.image")
		}
		v = submit.ImageSparkVersion(img)
	}
	if !s3a || !readsAvoidDownload(v) {
		return
	}
	w.items = append(w.items, &managed{key: AvoidDownloadSchemes, replace: "s3a", onlyIfUnset: true,
		reason: "the jars are s3a:// URLs from " + redact.URL(j.From) + ": each executor fetches them from the store, not through the driver (Spark 4.0+; earlier lines ignore it)"})
}

// readsAvoidDownload reports whether Spark version v reads
// AvoidDownloadSchemes: 4.0 and later, or v unknown ("" or unparsable).
func readsAvoidDownload(v string) bool {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err != nil || n >= 4
}
