// Package submit is the spark-submit command line as Spark reads it, and the
// shared core of the backends.
//
//   - The model: ParseArgv (the argv, with SparkSubmitOptionParser's option
//     table), PropsFile (java.util.Properties files such as
//     spark-defaults.conf) and LoadSubmission, which loads a command line
//     once into a Submission: the argv, --properties-file or
//     spark-defaults.conf and the environment, with Spark's precedence in
//     every accessor (Master, DeployMode with $MASTER/$DEPLOY_MODE, Name,
//     MainClass, Primary, AppArgs, SparkConf, Packages, WithConf). Every
//     backend reads this one value; none scans the argv or reads a conf
//     file itself.
//     The rewrite (package submit/rewrite) reads it through a small API:
//     PackagesKeys, PackagesFlagKey, IsPackagesKey, FlagOrConf,
//     Argv.Mixed and Argv.AppArgsBefore, PropsFile.Without and Select,
//     EnvPackages and UnreachableWarnings.
//   - The shared core of the backends: Backend (Submit(ctx, *Submission)),
//     Outcome and Timings. The backends live in submit/k8s (the only
//     package that imports client-go), submit/rest (standalone and Mesos
//     REST) and submit/local (the driver runs under spark-submit here); cmd
//     renders their results.
//
// Errors carry an errdefs kind; none names a process exit code.
package submit
