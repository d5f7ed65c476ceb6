package k8s

import "github.com/prebake/prebake/internal/exitcode"

// exitCancelled is the exit code of kindCancelled.
const exitCancelled = exitcode.DriverFailed
