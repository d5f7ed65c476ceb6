// Package native builds, with no JVM, exactly the Kubernetes objects that
// Spark's KubernetesClientApplication creates for a cluster-mode
// spark-submit to a k8s:// master: the driver Pod (with the feature steps
// that apply), the spark-drv-…-conf-map ConfigMap holding spark.properties,
// the headless driver Service, and the on-demand PVCs and executor pod
// template ConfigMap when configured. Create makes them in Spark's order
// (the pod first, then the rest owned by the pod).
//
// The input is a small value (Input) that FromSubmission derives from a
// spark-submit command line loaded once (submit.LoadSubmission) the way
// SparkSubmit does. What the native
// builder cannot reproduce (uploads of local files, Kerberos, client mode,
// custom feature steps, ...) is refused with an *UnsupportedError that names
// the option; the caller should then run the real spark-submit.
//
// Spark 3.5 and 4.0 differ in the minimum memory overhead
// (spark.driver.minMemoryOverhead, 4.0) and in {{APP_ID}} substitution in
// driver labels (4.0); Input.SparkVersion selects the rules.
package native
