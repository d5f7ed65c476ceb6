// Package exitcode holds prebake's single exit-code table (see README, "Exit codes"),
// the one classifier that maps an error to it (Code), and an error type that
// carries a code through wrapping for the CLI's own errors. Only the edge
// (cmd) imports it: libraries return errdefs kinds, never exit codes.
package exitcode

import (
	"fmt"

	"github.com/prebake/prebake/errdefs"
)

// The exit codes shared by every command: prebake's own. Every other code
// 1–255 is only used by submit, to pass the driver's own exit code through
// unchanged (Own).
const (
	OK           = 0
	Usage        = 64 // bad flag or argv
	DataErr      = 65 // malformed coordinate, POM, manifest or lock
	NotFound     = 66 // coordinate, image, bucket, pod, submission
	Unavailable  = 69 // a service is unavailable after retries
	Internal     = 70 // internal error
	CantCreate   = 73 // the cache or a store could not be written
	Timeout      = 75 // a time limit was reached
	RateLimited  = 76 // rate-limited by a service: 429; the message names it and when to retry
	NoPerm       = 77 // 401/403 from any service, after retries
	StaleLock    = 78 // a stale lock, where a stale lock is refused
	Hung         = 79 // submit: driver hung after SparkContext stopped, no exit code known
	DriverFailed = 80 // submit: driver failed with no container exit code
)

// Own reports whether code is one of prebake's own exit codes (0 included).
func Own(code int) bool {
	switch code {
	case OK, Usage, DataErr, NotFound, Unavailable, Internal, CantCreate, Timeout, RateLimited, NoPerm, StaleLock, Hung, DriverFailed:
		return true
	}
	return false
}

// Source says where an exit code came from.
const (
	SourcePrebake = "prebake"
	SourceDriver  = "driver"
)

// Error carries an exit code and its source through error wrapping.
type Error struct {
	Code   int
	Source string // SourcePrebake (default) or SourceDriver
	Err    error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// New wraps err with code. A nil err gives nil.
func New(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Source: SourcePrebake, Err: err}
}

// Errorf is fmt.Errorf with a code.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Source: SourcePrebake, Err: fmt.Errorf(format, args...)}
}

// Driver wraps err as the driver's own result with code.
func Driver(code int, err error) error {
	return &Error{Code: code, Source: SourceDriver, Err: err}
}

// kindCodes maps each errdefs.Kind to its exit code.
var kindCodes = map[errdefs.Kind]int{
	errdefs.BadArgument:  Usage,
	errdefs.Invalid:      DataErr,
	errdefs.NotFound:     NotFound,
	errdefs.Unavailable:  Unavailable,
	errdefs.Internal:     Internal,
	errdefs.CantWrite:    CantCreate,
	errdefs.Timeout:      Timeout,
	errdefs.Denied:       NoPerm,
	errdefs.RateLimited:  RateLimited,
	errdefs.Stale:        StaleLock,
	errdefs.Hung:         Hung,
	errdefs.DriverFailed: DriverFailed,
}

// outermost returns the code and source of the outermost classified error
// of err's chain (an *Error, or an *errdefs.Error of a known kind).
func outermost(err error) (code int, source string, ok bool) {
	errdefs.Walk(err, func(x error) bool {
		switch e := x.(type) {
		case *Error:
			code, source, ok = e.Code, e.Source, true
		case *errdefs.Error:
			switch {
			case e.Kind == errdefs.Unknown:
				return true
			case e.Kind == errdefs.DriverExit:
				code = e.Code
			default:
				code = kindCodes[e.Kind]
			}
			source, ok = SourcePrebake, true
			if e.Driver {
				source = SourceDriver
			}
		}
		return !ok
	})
	return code, source, ok
}

// Code is the one classifier: the exit code for err. 0 for nil, else the
// code of the outermost classified error (an *Error or an errdefs kind),
// else Internal.
func Code(err error) int {
	if err == nil {
		return OK
	}
	if code, _, ok := outermost(err); ok {
		return code
	}
	return Internal
}

// Outcome is the exit code of a run that ended with err and where it came
// from: the driver for a success (the driver decided it), else SourceOf.
func Outcome(err error) (code int, source string) {
	if err == nil {
		return OK, SourceDriver
	}
	return Code(err), SourceOf(err)
}

// SourceOf returns where the code of err came from.
func SourceOf(err error) string {
	if _, src, ok := outermost(err); ok && src != "" {
		return src
	}
	return SourcePrebake
}
