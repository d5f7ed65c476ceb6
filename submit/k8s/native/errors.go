package native

import (
	"errors"
	"fmt"
)

// ErrUnsupported is matched (errors.Is) by every *UnsupportedError.
var ErrUnsupported = errors.New("not reproducible without spark-submit")

// UnsupportedError says which option the native submitter cannot
// reproduce and why; the caller should submit through spark-submit.
type UnsupportedError struct {
	Option string // the spark-submit option or conf key, e.g. "spark.kubernetes.file.upload.path", or OptionSparkVersion
	Reason string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s; the native submitter cannot reproduce this", e.Option, e.Reason)
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// OptionSparkVersion is the Option of the UnsupportedError for an unknown
// Spark line (Input.SparkVersion), which no spark-submit option sets.
const OptionSparkVersion = "Spark version"

func unsupported(option, format string, a ...any) error {
	return &UnsupportedError{Option: option, Reason: fmt.Sprintf(format, a...)}
}

// InvalidError is a configuration spark-submit itself rejects (bad memory
// string, missing image, duplicate mount path, ...): a usage error.
type InvalidError struct {
	Option string
	Reason string
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Option, e.Reason) }

func invalid(option, format string, a ...any) error {
	return &InvalidError{Option: option, Reason: fmt.Sprintf(format, a...)}
}
