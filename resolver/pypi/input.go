// Package pypi is the Python half of resolution. This part reads what a
// PySpark job's Python dependencies are: a requirements file (pip's
// format), a pyproject.toml's [project] dependencies, or an already
// resolved PEP 751 pylock.toml or uv.lock, into one typed Input; with
// PEP 440 versions and specifiers and PEP 508 markers evaluated for a
// target environment.
//
// Indexes: the machine's pip configuration is where wheels come from.
// The --index-url, --extra-index-url and --find-links lines of a
// requirements file are recorded (Input.Indexes, without userinfo) but
// not honoured: a file committed next to a job must not send the
// machine's downloads to another host (a dependency confusion through
// --extra-index-url, or an air gap bypassed), and the lock records the
// index that served each wheel, so a difference shows. The same holds
// for the index a pylock.toml or uv.lock names for a package: its wheels
// carry their own URLs and hashes, which the fetch checks.
package pypi

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/redact"
)

// Format is the kind of file an Input was read from.
type Format string

// The formats.
const (
	FormatRequirements Format = "requirements"
	FormatPyproject    Format = "pyproject"
	FormatPylock       Format = "pylock"
	FormatUvLock       Format = "uv.lock"
)

// Input is what a job asks for: requirements to resolve, or packages
// already pinned by a lock.
type Input struct {
	Format Format
	// File is the file read (includes are named by each Origin).
	File string
	// Requirements to resolve (requirements file, pyproject.toml).
	Requirements []Requirement
	// Constraints (-c files) narrow the requirements' versions; they add
	// no package.
	Constraints []Requirement
	// Pinned are the packages of a pylock.toml or uv.lock.
	Pinned []Pin
	// Roots are a uv.lock's project's own dependency edges (its
	// workspace members'), where a walk of Pinned starts; the extras of
	// optional ones are in Extra.
	Roots []PinDependency
	// Indexes are the index lines of a requirements file, recorded only
	// (see the package comment).
	Indexes []IndexLine
	// RequiresPython is the lock's or project's requires-python.
	RequiresPython Specifiers
	// RequireHashes is --require-hashes; Pre is --pre.
	RequireHashes bool
	Pre           bool
}

// Origin is where something was read: a file and its line (the first
// line of a continued one).
type Origin struct {
	File string
	Line int
}

// String is "file:line", or "file" when the line is not known.
func (s Origin) String() string {
	if s.Line <= 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// Requirement is one PEP 508 requirement by name.
type Requirement struct {
	// Name is the PEP 503 normalized name ("typing-extensions").
	Name string
	// Extras are normalized and sorted.
	Extras     []string
	Specifiers Specifiers
	Marker     Marker
	// Hashes are --hash values, "sha256:<hex>" (sha384, sha512 too).
	Hashes []string
	Origin Origin
}

// IndexLine is an index line of a requirements file: Flag is
// "--index-url", "--extra-index-url", "--find-links" or "--no-index";
// URL has no userinfo.
type IndexLine struct {
	Flag   string
	URL    string
	Origin Origin
}

// Pin is a package of a lock at one version.
type Pin struct {
	Name    string // normalized
	Version string
	// Marker says where the package is installed (pylock.toml); a
	// uv.lock says it on Dependencies instead.
	Marker         Marker
	RequiresPython Specifiers
	// Index is the index the lock names, without userinfo.
	Index  string
	Wheels []PinnedWheel
	// Sdist is the source distribution, if any: a package with no wheel
	// cannot be locked as wheels (SdistOnly).
	Sdist *PinnedSdist
	// Dependencies are a uv.lock's edges, ResolutionMarkers the forks the
	// version belongs to.
	Dependencies      []PinDependency
	ResolutionMarkers []string
	Origin            Origin
}

// SdistOnly reports a package with no wheel: not lockable as wheels.
func (p Pin) SdistOnly() bool { return len(p.Wheels) == 0 }

// PinnedWheel is one wheel file of a pinned package.
type PinnedWheel struct {
	// Name is the wheel's file name (its tags choose it for a target).
	Name string
	// URL has no userinfo.
	URL    string
	SHA256 string
	Size   int64
}

// PinnedSdist is a source distribution.
type PinnedSdist struct {
	URL    string
	SHA256 string
	Size   int64
}

// PinDependency is an edge of a uv.lock: the dependency's name, version
// when several are locked, extras and marker; Extra is the depending
// package's extra that asks for it ("" for a plain dependency).
type PinDependency struct {
	Name    string
	Version string
	Extras  []string
	Marker  Marker
	Extra   string
}

// FullyPinned reports an input that needs no resolver: a lock, or a
// requirements file in pip's hash-checking form (every requirement is
// "==V" with at least one --hash).
func (in *Input) FullyPinned() bool {
	switch in.Format {
	case FormatPylock, FormatUvLock:
		return true
	case FormatRequirements:
		if len(in.Requirements) == 0 {
			return false
		}
		for _, r := range in.Requirements {
			if _, ok := r.Specifiers.Pinned(); !ok || len(r.Hashes) == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// Limits on hostile input.
const (
	// MaxFileSize is the largest file read.
	MaxFileSize = 1 << 20
	// MaxIncludeDepth bounds -r/-c chains.
	MaxIncludeDepth = 16
	// MaxFiles bounds the files one requirements file includes in all.
	MaxFiles = 256
)

// LineError is an error at a line of an input file; errors.As finds it.
type LineError struct {
	Origin
	Err error
}

func (e *LineError) Error() string { return e.Origin.String() + ": " + e.Err.Error() }

// Unwrap returns the error.
func (e *LineError) Unwrap() error { return e.Err }

// lineErrorf is an Invalid error at src.
func lineErrorf(src Origin, format string, args ...any) error {
	return errdefs.New(errdefs.Invalid, &LineError{Origin: src, Err: fmt.Errorf(format, args...)})
}

// lineError wraps err at src, keeping err's kind (Invalid when none).
func lineError(src Origin, err error) error {
	k := errdefs.KindOf(err)
	if k == errdefs.Unknown {
		k = errdefs.Invalid
	}
	return errdefs.New(k, &LineError{Origin: src, Err: err})
}

// ReadOption configures reading an input.
type ReadOption func(*readOptions) error

type readOptions struct {
	extras  []string
	getenv  func(string) (string, bool)
	maxSize int64
}

// WithExtras asks for a pyproject.toml's optional dependencies of these
// extras (an extra the project does not declare is an error). The
// default is none.
func WithExtras(extras ...string) ReadOption {
	return func(o *readOptions) error { o.extras = append(o.extras, extras...); return nil }
}

// WithGetenv sets how ${VAR} in a requirements file is expanded. The
// default is os.LookupEnv.
func WithGetenv(getenv func(string) (string, bool)) ReadOption {
	return func(o *readOptions) error { o.getenv = getenv; return nil }
}

// WithMaxFileSize sets the largest file read. The default is MaxFileSize.
func WithMaxFileSize(n int64) ReadOption {
	return func(o *readOptions) error { o.maxSize = n; return nil }
}

// makeReadOptions sets the defaults, then applies opts; the first option
// error stops it.
func makeReadOptions(opts []ReadOption) (*readOptions, error) {
	o := &readOptions{getenv: os.LookupEnv, maxSize: MaxFileSize}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Read reads the input at path, its format chosen by its name:
// pyproject.toml, pylock.toml (or pylock.NAME.toml), uv.lock, and any
// other name a requirements file.
func Read(ctx context.Context, path string, opts ...ReadOption) (*Input, error) {
	switch base := filepath.Base(path); {
	case base == "pyproject.toml":
		return ReadPyproject(ctx, path, opts...)
	case base == "uv.lock":
		return ReadUvLock(ctx, path, opts...)
	case base == "pylock.toml" || strings.HasPrefix(base, "pylock.") && strings.HasSuffix(base, ".toml"):
		return ReadPylock(ctx, path, opts...)
	}
	return ReadRequirements(ctx, path, opts...)
}

// readInputFile reads a file a user named, refusing a FIFO, a device or a
// directory (without blocking), and one over the size limit.
func readInputFile(path string, o *readOptions) ([]byte, error) {
	if path == "" {
		return nil, errdefs.Optionf(errdefs.BadArgument, "path", "no file named")
	}
	return localfile.Read(path, o.maxSize)
}

// checkText refuses NUL bytes and invalid UTF-8, naming the line.
func checkText(file string, data []byte) error {
	line := 1
	for i, b := range data {
		switch b {
		case '\n':
			line++
		case 0:
			return lineErrorf(Origin{file, line}, "a NUL byte at offset %d", i)
		}
	}
	if !utf8.Valid(data) {
		return lineErrorf(Origin{file, badUTF8Line(data)}, "not valid UTF-8")
	}
	return nil
}

// nameRE is PEP 508's project name.
var nameRE = regexp.MustCompile(`^(?i:[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$`)

var nameSepRE = regexp.MustCompile(`[-_.]+`)

// CanonicalName is PEP 503's normalized project name: lowercase, each run
// of "-", "_" and "." one "-".
func CanonicalName(name string) string {
	return nameSepRE.ReplaceAllString(strings.ToLower(name), "-")
}

// noUserinfo removes a URL's userinfo (it is never stored nor logged); a
// URL that does not parse loses all that may be userinfo.
func noUserinfo(s string) string {
	if _, err := url.Parse(s); err != nil {
		return redact.URL(s)
	}
	return redact.StripUserinfo(s)
}

// ErrNotWheel is matched (errors.Is) by what cannot be locked as wheels
// from an index: editable, URL, path and VCS requirements, and a lock's
// packages from a VCS, a directory, an archive, git or a path.
var ErrNotWheel = errors.New("not lockable as wheels")

// badUTF8Line is the line of data's first invalid UTF-8 sequence.
func badUTF8Line(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		data = data[n:]
	}
	return line
}
