// Package rewrite removes every --packages source from a spark-submit
// command line or a SparkApplication manifest and puts the resolved jars in
// one jar list, so that nothing resolves at run time.
//
//   - Apply rewrites a command line (a submit.Submission, loaded once)
//     with its resolved jars, a value (Jars: file: paths, and an image's
//     local:// jars or a store's URLs); Manifest rewrites spark-operator
//     YAML, whose documents each name their packages, and asks a
//     JarSource (WithJarSource) for their jars. Both take WithImage,
//     WithRoleImages and WithWorkDir; Apply reads the environment the
//     submission was loaded with.
//   - Result and ManifestResult say what changed and why (Change) and carry
//     Warnings with a WarningKind, so that a caller adds its own words.
//     Their JSON forms are stable schemas (the CLI's JSON documents).
//
// It reads the command line only through package submit's model; the
// backends (submit/k8s, submit/rest, submit/local) do not import it.
// Errors carry an errdefs kind; none names a process exit code.
package rewrite
