package cmd

import "github.com/prebake/prebake/internal/exitcode"

// codeMeaning is the README's one-line meaning of each exit code (the
// "meaning" of the -o json failure object); the codes are internal/exitcode's.
func codeMeaning(code int) string {
	switch code {
	case exitcode.OK:
		return "success"
	case exitcode.Usage:
		return "usage error"
	case exitcode.DataErr:
		return "bad input data"
	case exitcode.NotFound:
		return "not found"
	case exitcode.Unavailable:
		return "service unavailable after retries"
	case exitcode.Internal:
		return "internal error"
	case exitcode.CantCreate:
		return "cache or store could not be written"
	case exitcode.Timeout:
		return "timeout"
	case exitcode.RateLimited:
		return "rate-limited by a service"
	case exitcode.NoPerm:
		return "permission denied"
	case exitcode.StaleLock:
		return "stale lock with --frozen"
	case exitcode.Hung:
		return "driver hung after SparkContext stopped"
	case exitcode.DriverFailed:
		return "driver failed with no container exit code"
	}
	return "driver exit code"
}
