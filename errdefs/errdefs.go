// Package errdefs says what failed, for every library of prebake.
//
// Libraries return errors that carry a Kind (errors.Is(err, errdefs.NotFound))
// and never choose a process exit code; the CLI's one classifier
// (internal/exitcode.Code, used by cmd) maps the outermost Kind to the
// exit-code table of the README. The message of an *Error is the message of
// the error it wraps, so a Kind adds no text.
package errdefs

import "fmt"

// Kind is what failed. A Kind is also an error, the target of errors.Is.
type Kind int

// The kinds. Unknown makes no claim: the classifier looks further down the
// chain (and calls an unclassified error internal).
const (
	Unknown      Kind = iota
	BadArgument       // a bad argument or option value
	Invalid           // malformed input data: coordinate, POM, manifest, lock
	NotFound          // coordinate, image, bucket, pod, submission
	Unavailable       // a service is unavailable after retries
	Internal          // a bug or an unexpected state
	CantWrite         // the cache or a store could not be written
	Timeout           // a deadline passed
	Denied            // 401/403 from a service, after retries
	RateLimited       // 429 from a service: throttled, not missing (RateLimitError says when to retry)
	Stale             // a lock that no longer matches its inputs, where that is refused
	Hung              // the driver hung after SparkContext stopped, no exit code known
	DriverFailed      // the driver failed with no container exit code
	DriverExit        // the driver's own exit code (Error.Code)
)

var kindNames = [...]string{"unknown", "bad argument", "invalid input", "not found", "unavailable", "internal error",
	"cannot write", "timeout", "permission denied", "rate limited", "stale lock", "driver hung", "driver failed", "driver exit code"}

// String names k.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Error makes a Kind an errors.Is target.
func (k Kind) Error() string { return k.String() }

// Error is an error of a Kind.
type Error struct {
	Kind Kind
	// Code is the driver's exit code when Kind is DriverExit.
	Code int
	// Driver is true when the outcome is the Spark driver's own (it failed
	// or exited), not prebake's.
	Driver bool
	Err    error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Kind.String()
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the error's Kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k != Unknown && k == e.Kind
}

// New wraps err with kind k. A nil err gives nil.
func New(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// Errorf is fmt.Errorf with a kind.
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Driver is the driver's own exit code, passed through.
func Driver(code int, err error) error {
	return &Error{Kind: DriverExit, Code: code, Driver: true, Err: err}
}

// DriverError is the driver's own failure, with no exit code of its own.
func DriverError(err error) error {
	return &Error{Kind: DriverFailed, Driver: true, Err: err}
}

// KindOf returns the kind of the outermost *Error in err's chain that makes
// a claim (not Unknown), or Unknown.
func KindOf(err error) Kind {
	if e := Outermost(err); e != nil {
		return e.Kind
	}
	return Unknown
}

// Outermost returns the outermost *Error of err's chain whose Kind is not
// Unknown, in errors.As order, or nil.
func Outermost(err error) *Error {
	var found *Error
	Walk(err, func(x error) bool {
		if e, ok := x.(*Error); ok && e.Kind != Unknown {
			found = e
			return false
		}
		return true
	})
	return found
}

// Walk visits err's chain depth first in errors.As order (an error, then
// what it wraps, each branch of a joined error in turn) until visit returns
// false. It reports whether the walk ran to its end.
func Walk(err error, visit func(error) bool) bool {
	if err == nil {
		return true
	}
	if !visit(err) {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return Walk(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if !Walk(e, visit) {
				return false
			}
		}
	}
	return true
}

// OptionError is an error an option's value explains: a bad or missing
// value, or an outcome the value chose (a time limit reached, a driver left
// running). Option names the option in the library's own terms (its Go
// name, "layers.BakeInput.Target"), never a CLI flag: the edge maps it to
// the flag or setting that sets it.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *OptionError) Unwrap() error { return e.Err }

// Optionf is Errorf for a bad value of option (see OptionError).
func Optionf(k Kind, option, format string, args ...any) error {
	return &Error{Kind: k, Err: &OptionError{Option: option, Err: fmt.Errorf(format, args...)}}
}

// OptionOf returns the Option of the outermost *OptionError in err's chain,
// or "".
func OptionOf(err error) string {
	var o string
	Walk(err, func(x error) bool {
		if e, ok := x.(*OptionError); ok {
			o = e.Option
			return false
		}
		return true
	})
	return o
}
