// Package rest is the standalone and Mesos REST submit.Backend: the
// submission protocol spark-submit's RestSubmissionClient speaks to
// spark:// and mesos:// masters in cluster mode (CreateSubmissionRequest,
// status, kill), with the polling spark-submit lacks.
//
//   - Submit builds the CreateSubmissionRequest from the rewritten argv;
//     a packages key never reaches its sparkProperties (ErrPackages), since
//     the worker's DriverWrapper would resolve it with Ivy again.
//   - The driver is polled to its end (FINISHED, FAILED, KILLED, ERROR)
//     across every master of a spark://h1,h2 list, where spark-submit's
//     client stops after 10 polls; only WithTimeout, or WithRetry's count of
//     consecutive failed polls, ends it early. Network errors are retried
//     with backoff (WithRetry); an answer from standby masters only is
//     ErrNoAliveMaster, none that speaks the protocol ErrUnavailable or
//     ErrProtocolVersion.
//   - Attach, Status and Kill follow, report and kill a driver submitted
//     elsewhere, as spark-submit --status and --kill do; a cancelled
//     submission is killed unless WithKillOnCancel(false).
//
// New checks its options (errdefs.BadArgument naming the option). The
// master's texts are redacted and bounded before they reach a Result; every
// error carries its errdefs kind for the exit code at the edge.
package rest
