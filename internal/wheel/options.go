package wheel

import (
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
)

// DefaultMaxSize is the default bound on a wheel's uncompressed bytes.
const DefaultMaxSize = 2 << 30

// DefaultMaxFiles is the default bound on a wheel's members (the largest
// real wheels hold some tens of thousands).
const DefaultMaxFiles = 1 << 18

// DefaultMaxRatio is the default bound on a member's uncompressed size over
// its compressed size, for members over 1 MiB (deflate tops out near 1032).
const DefaultMaxRatio = 200

// ratioFloor is the size under which the ratio is not checked: small files
// of spaces compress well and harm no one.
const ratioFloor = 1 << 20

// DefaultEpoch is the default mtime of installed files and directories
// (layers.DefaultEpoch; callers pass layers.Epoch() to honour
// SOURCE_DATE_EPOCH).
var DefaultEpoch = time.Unix(1, 0).UTC()

// Option configures Install.
type Option func(*options) error

type options struct {
	maxSize    int64
	maxFiles   int
	maxRatio   int64
	scriptsDir string // "" skips .data/scripts
	python     string
	dataDir    string // "" skips .data/data
	epoch      time.Time
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{maxSize: DefaultMaxSize, maxFiles: DefaultMaxFiles, maxRatio: DefaultMaxRatio, epoch: DefaultEpoch}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.scriptsDir != "" && o.scriptsDir == o.dataDir {
		return nil, errdefs.Optionf(errdefs.BadArgument, "wheel.WithData", "scripts and data share the directory %q", o.dataDir)
	}
	return o, nil
}

// WithMaxSize bounds the wheel's total uncompressed size, every member
// counted (a zip bomb is errdefs.Invalid, ErrTooLarge). The default is
// DefaultMaxSize (2 GiB).
func WithMaxSize(n int64) Option {
	return positive("wheel.WithMaxSize", n, func(o *options) *int64 { return &o.maxSize })
}

// WithMaxFiles bounds the number of members, directories included (else
// ErrTooLarge). The default is DefaultMaxFiles (262144).
func WithMaxFiles(n int) Option {
	return positive("wheel.WithMaxFiles", n, func(o *options) *int { return &o.maxFiles })
}

// WithMaxRatio bounds each member's uncompressed size over its compressed
// size (members under 1 MiB are not checked). The default is
// DefaultMaxRatio (200).
func WithMaxRatio(r int64) Option {
	return positive("wheel.WithMaxRatio", r, func(o *options) *int64 { return &o.maxRatio })
}

// WithScripts installs the wheel's .data/scripts under dir (a relative
// path under root, "bin"), mode 0755, and rewrites a first line "#!python…"
// to "#!"+python (python is an absolute path; "" leaves scripts as they
// are). No script is ever run. The default skips scripts and lists them in
// Installed.Skipped.
func WithScripts(dir, python string) Option {
	return func(o *options) error {
		if err := checkDir("wheel.WithScripts", dir); err != nil {
			return err
		}
		if python != "" && (!strings.HasPrefix(python, "/") || strings.ContainsFunc(python, func(r rune) bool { return r <= ' ' || r == 0x7f })) {
			return errdefs.Optionf(errdefs.BadArgument, "wheel.WithScripts", "interpreter %q: want an absolute path without spaces", python)
		}
		o.scriptsDir, o.python = dir, python
		return nil
	}
}

// WithData installs the wheel's .data/data under dir (a relative path under
// root; "." is root itself, as pip installing into a target directory does). The default skips them
// and lists them in Installed.Skipped.
func WithData(dir string) Option {
	return func(o *options) error {
		if err := checkDir("wheel.WithData", dir); err != nil {
			return err
		}
		o.dataDir = dir
		return nil
	}
}

// WithEpoch sets the mtime of every installed file and directory. The
// default is DefaultEpoch, 1970-01-01T00:00:01Z.
func WithEpoch(t time.Time) Option {
	return func(o *options) error { o.epoch = t; return nil }
}

// positive is an option setting a bound to n, which must be positive.
func positive[T int | int64](option string, n T, bound func(*options) *T) Option {
	return func(o *options) error {
		if n <= 0 {
			return errdefs.Optionf(errdefs.BadArgument, option, "%d: want a positive number", n)
		}
		*bound(o) = n
		return nil
	}
}

func checkDir(option, dir string) error {
	if dir == "." {
		return nil
	}
	if dir == "" || strings.HasPrefix(dir, "/") || strings.HasSuffix(dir, "/") || strings.Contains(dir, "//") {
		return errdefs.Optionf(errdefs.BadArgument, option, "directory %q: want a relative path such as bin", dir)
	}
	if err := safepath.Rel(dir); err != nil {
		return errdefs.New(errdefs.BadArgument, &errdefs.OptionError{Option: option, Err: err})
	}
	return nil
}
