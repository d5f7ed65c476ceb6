// Package k8s is the Kubernetes submit.Backend: it submits k8s:// submissions
// and follows the driver to its real end, so that the exit code is the
// driver's (spark-submit on Kubernetes exits 0 when the driver fails).
//
//   - Who creates the driver (WithSubmitter, WithVia): the real spark-submit,
//     run by submit/local's runner with a fixed driver pod name and
//     spark.kubernetes.submission.waitAppCompletion=false; the native
//     submitter (package submit/k8s/native: the same objects built in Go, no
//     JVM); or a kubeflow SparkApplication (WithVia(ViaOperator)). In client
//     mode the driver is spark-submit itself and its exit code is the result.
//   - The poll: the driver pod is read with exactly the credentials the
//     submission was given (creds.go: spark.kubernetes.authenticate.submission.*,
//     a kubeconfig or the pod's own service account, each file bounded); a
//     token file is read again for every request, and a 401/403 re-reads the
//     credentials and rebuilds the client a bounded number of times. A driver container still Running after SparkContext stopped is
//     recognised from its log (WithHungGrace, WithKillHungDriver); 5xx and
//     network errors are retried for WithAPIRetryTimeout.
//   - Attach, Status and Kill follow, report and delete drivers submitted
//     elsewhere (ids "namespace:pod", as spark-submit --status/--kill take
//     them); SubmitBatch creates many applications natively; Probe and
//     SubmitNeeds check what a submission needs of the API server.
//
// New checks its options (errdefs.BadArgument naming the option). The
// backend prints only progress; the outcome is a *Result, and every error
// carries its errdefs kind and source for the exit code at the edge.
package k8s
