package rewrite

import (
	"sort"
	"strings"

	"github.com/prebake/prebake/internal/redact"
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
