package resolver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

// LockVersion is the lockfile schema version.
const LockVersion = 1

// Lockfile is prebake.lock: the inputs of a resolution and the jars it gave,
// in spark.jars order (sorted by file name). Field order is alphabetical so
// that encoding/json writes sorted keys.
type Lockfile struct {
	Artifacts []Artifact `json:"artifacts"`
	Inputs    Inputs     `json:"inputs"`
	// LockHash is Hash() at write time, recorded for readers such as the
	// image annotation and S3 set names. It is recomputed on read.
	LockHash string `json:"lockHash"`
	Version  int    `json:"version"`
}

// Inputs are what a resolution depended on. Repositories never carry userinfo.
type Inputs struct {
	Conflict     string   `json:"conflict"`
	Excludes     []string `json:"excludes"`
	InputsHash   string   `json:"inputsHash"`
	Packages     []string `json:"packages"`
	Repositories []string `json:"repositories"`
}

// Artifact is one resolved jar.
type Artifact struct {
	Coord      string `json:"coord"`      // g:a:v[:classifier]
	File       string `json:"file"`       // Spark-style name: <g>_<a>-<v>[-<classifier>].jar
	Repository string `json:"repository"` // the URL that served it, without userinfo
	Sha256     string `json:"sha256"`     // hex
	Size       int64  `json:"size"`
}

// ComputeInputsHash returns the sha256 of the canonical form of in (the
// InputsHash field itself is ignored).
func ComputeInputsHash(in Inputs) string {
	var b strings.Builder
	b.WriteString("prebake-inputs-v1\n")
	write := func(k string, vs []string) {
		b.WriteString(k)
		b.WriteByte('\n')
		for _, v := range vs {
			b.WriteString("\t")
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	write("packages", in.Packages)
	write("repositories", in.Repositories)
	write("excludes", in.Excludes)
	write("conflict", []string{in.Conflict})
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Hash returns the lock hash: the sha256 of the canonical artifacts list
// (coord, file, sha256 per line, in file order). It names the set everywhere.
func (l *Lockfile) Hash() string {
	arts := slices.Clone(l.Artifacts)
	slices.SortFunc(arts, func(a, b Artifact) int { return strings.Compare(a.File, b.File) })
	var b strings.Builder
	b.WriteString("prebake-lock-v1\n")
	for _, a := range arts {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", a.Coord, a.File, a.Sha256)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Normalize sorts the artifacts by file name and fills the hashes and version.
func (l *Lockfile) Normalize() {
	slices.SortFunc(l.Artifacts, func(a, b Artifact) int { return strings.Compare(a.File, b.File) })
	if l.Inputs.Packages == nil {
		l.Inputs.Packages = []string{}
	}
	if l.Inputs.Repositories == nil {
		l.Inputs.Repositories = []string{}
	}
	if l.Inputs.Excludes == nil {
		l.Inputs.Excludes = []string{}
	}
	if l.Artifacts == nil {
		l.Artifacts = []Artifact{}
	}
	l.Inputs.InputsHash = ComputeInputsHash(l.Inputs)
	l.LockHash = l.Hash()
	l.Version = LockVersion
}

// Marshal returns the stable, indented JSON form with a trailing newline.
func (l *Lockfile) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseLock parses and validates a lockfile. name is used in errors.
func ParseLock(name string, data []byte) (*Lockfile, error) {
	var l Lockfile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: %w", name, err)
	}
	if l.Version != LockVersion {
		return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: unsupported version %d (want %d)", name, l.Version, LockVersion)
	}
	if err := l.check(); err != nil {
		return nil, exitcode.New(exitcode.DataErr, fmt.Errorf("lockfile %s: %w", name, err))
	}
	if l.LockHash != "" && l.LockHash != l.Hash() {
		return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: lockHash %s does not match its artifacts (%s); was it edited by hand?", name, l.LockHash, l.Hash())
	}
	l.LockHash = l.Hash()
	return &l, nil
}

// ErrBadLock is matched (errors.Is) by a lock or manifest entry that
// CheckArtifact refuses.
var ErrBadLock = errors.New("invalid lock entry")

// CheckArtifact checks one locked jar, from a lock or a store manifest:
// coord is g:a:v[:classifier] with every part passing maven.CheckPart and
// none empty; file is a bare file name (safepath.Name); sha256 is 64 hex
// digits; size is not negative. The error matches ErrBadLock.
func CheckArtifact(a Artifact) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: artifact %s: %s", ErrBadLock, maven.Quote(a.File), fmt.Sprintf(format, args...))
	}
	if err := safepath.Name(a.File); err != nil {
		return bad("file: %v", err)
	}
	p := strings.Split(a.Coord, ":")
	if len(p) != 3 && len(p) != 4 {
		return bad("coord %s is not g:a:v[:classifier]", maven.Quote(a.Coord))
	}
	if slices.Contains(p, "") {
		return bad("coord %s has an empty part", maven.Quote(a.Coord))
	}
	if err := maven.CheckParts(p...); err != nil {
		return bad("coord: %v", err)
	}
	if len(a.Sha256) != 64 {
		return bad("sha256 %s is not 64 hex digits", maven.Quote(a.Sha256))
	}
	if _, err := hex.DecodeString(a.Sha256); err != nil {
		return bad("sha256 %s is not hex", maven.Quote(a.Sha256))
	}
	if a.Size < 0 {
		return bad("size %d is negative", a.Size)
	}
	return nil
}

// check is CheckArtifact on every artifact, and no file name twice.
func (l *Lockfile) check() error {
	seen := make(map[string]bool, len(l.Artifacts))
	for _, a := range l.Artifacts {
		if err := CheckArtifact(a); err != nil {
			return err
		}
		if seen[a.File] {
			return fmt.Errorf("%w: artifact %s appears twice", ErrBadLock, maven.Quote(a.File))
		}
		seen[a.File] = true
	}
	return nil
}

// ReadLock reads a lockfile from path. A missing file gives an error that
// satisfies errors.Is(err, os.ErrNotExist).
func ReadLock(path string) (*Lockfile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, exitcode.New(exitcode.NotFound, fmt.Errorf("lockfile %s: %w", path, err))
		}
		return nil, exitcode.New(exitcode.DataErr, fmt.Errorf("lockfile %s: %w", path, err))
	}
	return ParseLock(path, data)
}

// WriteLock normalizes l and writes it to path atomically (temp file + rename).
func WriteLock(path string, l *Lockfile) error {
	l.Normalize()
	// A lock prebake writes is always one ParseLock accepts.
	if err := l.check(); err != nil {
		return exitcode.New(exitcode.DataErr, fmt.Errorf("lockfile %s: not written: %w", path, err))
	}
	data, err := l.Marshal()
	if err != nil {
		return exitcode.New(exitcode.Internal, fmt.Errorf("lockfile %s: %w", path, err))
	}
	if err := WriteFileAtomic(path, data, 0o644); err != nil {
		return exitcode.New(exitcode.CantCreate, fmt.Errorf("writing lockfile %s: %w", path, err))
	}
	return nil
}

// WriteFileAtomic writes data to a temp file beside path, syncs it and renames
// it into place, so no reader ever sees a partial file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
