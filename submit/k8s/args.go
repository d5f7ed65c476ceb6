package k8s

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/submit"
)

// k8sArgs is what the K8s backend reads from a (rewritten) submission,
// loaded once by the caller (submit.LoadSubmission): Spark's master and
// deploy mode (flag, conf, $MASTER/$DEPLOY_MODE) and the effective Spark
// conf (--conf over --properties-file/spark-defaults.conf).
type k8sArgs struct {
	sub    *submit.Submission
	master string            // the effective master
	conf   map[string]string // the effective Spark conf
}

// newK8sArgs reads sub.
func newK8sArgs(sub *submit.Submission) *k8sArgs {
	return &k8sArgs{sub: sub, master: sub.Master(), conf: sub.SparkConf()}
}

// appName is Spark's application name (submit.Submission.Name), else
// "spark".
func (a *k8sArgs) appName() string {
	if n := a.sub.Name(); n != "" {
		return n
	}
	return "spark"
}

// deployMode is Spark's: --deploy-mode, spark.submit.deployMode,
// $DEPLOY_MODE, else client.
func (a *k8sArgs) deployMode() string { return a.sub.DeployMode() }

// namespace is spark.kubernetes.namespace, default "default".
func (a *k8sArgs) namespace() string {
	if ns := a.conf["spark.kubernetes.namespace"]; ns != "" {
		return ns
	}
	return "default"
}

// withConf returns the argv with --conf k=v options inserted just before the
// primary resource, so they win over the user's own.
func (a *k8sArgs) withConf(kv ...string) []string { return a.sub.WithConf(kv...) }

var (
	nonNameChars  = regexp.MustCompile(`[^a-z0-9-]`)
	dashes        = regexp.MustCompile(`-+`)
	leadingDigit  = regexp.MustCompile(`^[0-9]`)
	driverNameMax = 253
)

// sanitizeResourcePrefix is KubernetesConf.getResourceNamePrefix's cleanup
// (Spark 3.5): lowercase, [^a-z0-9-] to "-", collapse dashes, drop a leading
// dash, a leading digit becomes "x".
func sanitizeResourcePrefix(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = nonNameChars.ReplaceAllString(s, "-")
	s = dashes.ReplaceAllString(s, "-")
	s = strings.TrimPrefix(s, "-")
	return leadingDigit.ReplaceAllString(s, "x")
}

// uniqueID is KubernetesUtils.uniqueID: 3 random bytes in hex, then the
// current time in millis masked to 40 bits, in hex.
func uniqueID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b) + strconv.FormatInt(now.UnixMilli()&0xFFFFFFFFFF, 16)
}

// driverPodName is spark.kubernetes.driver.pod.name when given, else the name
// Spark 3.5 would generate: sanitize(appName-uniqueID)-driver.
func (a *k8sArgs) driverPodName(now time.Time) string {
	if n := a.conf["spark.kubernetes.driver.pod.name"]; n != "" {
		return n
	}
	n := sanitizeResourcePrefix(a.appName()+"-"+uniqueID(now)) + "-driver"
	if len(n) > driverNameMax {
		n = strings.TrimLeft(n[len(n)-driverNameMax:], "-")
	}
	return n
}
