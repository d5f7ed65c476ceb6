// Package submit is the spark-submit command line as Spark reads it, and its
// rewrite.
//
//   - The model: ParseArgv (the argv, with SparkSubmitOptionParser's option
//     table), PropsFile/PropsMap (java.util.Properties files such as
//     spark-defaults.conf) and LoadSubmission (the effective conf: argv,
//     --properties-file or spark-defaults.conf, and the environment), with
//     Packages (every --packages source) and ClusterKind.
//   - The rewrite: Rewrite and RewriteManifest remove every --packages
//     source and put the jars a JarSource gives (file: paths, an image's
//     local:// jars or a store's URLs) in one jar list.
//   - The shared core of the backends: Backend, Outcome and Timings. The
//     backends live in submit/k8s (the only package that imports client-go)
//     and submit/rest (standalone and Mesos REST); cmd renders their results.
//
// Errors carry an errdefs kind; none names a process exit code.
package submit
