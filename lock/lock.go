// Package lock is prebake.lock: the contract between resolution and
// everything after it. The resolver produces a File; layers, s3store,
// submit, lockdiff and sbom consume one and never import the resolver.
//
// A lock names its jar set by Hash (the lock hash), which the image
// annotation and the S3 set names carry. Write is atomic: a reader never
// sees a partial lockfile.
package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/safepath"
)

// SchemaVersion is the lockfile schema version.
const SchemaVersion = 1

// Conflict is the conflict manager of a resolution.
type Conflict string

// The conflict managers a lock's Inputs.Conflict may name.
const (
	ConflictLatest  Conflict = "latest"  // Ivy's latest-revision, Spark's behaviour (default)
	ConflictNearest Conflict = "nearest" // Maven's nearest-wins
)

// ErrCorruptBlob is matched (errors.Is) when a jar's bytes do not match the
// sha256 (or size) a lock records for it.
var ErrCorruptBlob = errors.New("cache blob does not match its sha256")

// File is prebake.lock: the inputs of a resolution and the jars it gave,
// in spark.jars order (sorted by file name). Field order is alphabetical so
// that encoding/json writes sorted keys.
type File struct {
	Artifacts []Artifact `json:"artifacts"`
	Inputs    Inputs     `json:"inputs"`
	// LockHash is Hash() at write time, recorded for readers such as the
	// image annotation and S3 set names. It is recomputed on read.
	LockHash string `json:"lockHash"`
	Version  int    `json:"version"`
}

// Inputs are what a resolution depended on. Repositories never carry userinfo.
type Inputs struct {
	Conflict   Conflict `json:"conflict"`
	Excludes   []string `json:"excludes"`
	InputsHash string   `json:"inputsHash"`
	// Ivy is "2.5.1" when the resolution followed a Spark line whose Ivy
	// predates 2.5.2 (IVY-1642), else empty (and not hashed).
	Ivy          string   `json:"ivy,omitempty"`
	Packages     []string `json:"packages"`
	Repositories []string `json:"repositories"`
}

// Artifact is one resolved jar.
type Artifact struct {
	Coord      string `json:"coord"`      // g:a:v[:classifier]
	File       string `json:"file"`       // Spark-style name: <g>_<a>-<v>[-<classifier>].jar
	Repository string `json:"repository"` // the URL that served it, without userinfo
	Sha256     string `json:"sha256"`     // hex
	// SignedBy is the primary fingerprint (upper-case hex) of the OpenPGP
	// key whose signature (.asc) of the jar verified when the lock was
	// written with signatures verified; empty otherwise. It is not part of
	// the lock hash: the same jars are the same set.
	SignedBy string `json:"signedBy,omitempty"`
	Size     int64  `json:"size"`
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
	write("conflict", []string{string(in.Conflict)})
	if in.Ivy != "" {
		write("ivy", []string{in.Ivy})
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Hash returns the lock hash: the sha256 of the canonical artifacts list
// (coord, file, sha256 per line, in file order). It names the set everywhere.
func (l *File) Hash() string {
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
func (l *File) Normalize() {
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
	l.Version = SchemaVersion
}

// Marshal returns the stable, indented JSON form with a trailing newline.
func (l *File) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Parse parses and validates a lockfile. name is used in errors.
func Parse(name string, data []byte) (*File, error) {
	var l File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, errdefs.Errorf(errdefs.Invalid, "lockfile %s: %w", name, err)
	}
	if l.Version != SchemaVersion {
		return nil, errdefs.Errorf(errdefs.Invalid, "lockfile %s: unsupported version %d (want %d)", name, l.Version, SchemaVersion)
	}
	if err := l.Check(); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("lockfile %s: %w", name, err))
	}
	if err := l.CheckHashes(); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("lockfile %s: %w", name, err))
	}
	if l.LockHash != "" && l.LockHash != l.Hash() {
		return nil, errdefs.Errorf(errdefs.Invalid, "lockfile %s: lockHash %s does not match its artifacts (%s); was it edited by hand?", name, l.LockHash, l.Hash())
	}
	l.LockHash = l.Hash()
	return &l, nil
}

// ErrBadLock is matched (errors.Is) by a lock or manifest entry that
// CheckArtifact refuses.
var ErrBadLock = errors.New("invalid lock entry")

// CheckArtifact checks one locked jar, from a lock or a store manifest:
// coord is g:a:v[:classifier] with every part passing maven.CheckPart (internal/coordpart) and
// none empty; file is a bare file name (safepath.Name); sha256 is 64 hex
// digits; size is not negative. The error matches ErrBadLock.
func CheckArtifact(a Artifact) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: artifact %s: %s", ErrBadLock, coordpart.Quote(a.File), fmt.Sprintf(format, args...))
	}
	if err := safepath.Name(a.File); err != nil {
		return bad("file: %v", err)
	}
	p := strings.Split(a.Coord, ":")
	if len(p) != 3 && len(p) != 4 {
		return bad("coord %s is not g:a:v[:classifier]", coordpart.Quote(a.Coord))
	}
	if slices.Contains(p, "") {
		return bad("coord %s has an empty part", coordpart.Quote(a.Coord))
	}
	if err := coordpart.CheckParts(p...); err != nil {
		return bad("coord: %v", err)
	}
	if len(a.Sha256) != 64 {
		return bad("sha256 %s is not 64 hex digits", coordpart.Quote(a.Sha256))
	}
	if _, err := hex.DecodeString(a.Sha256); err != nil {
		return bad("sha256 %s is not hex", coordpart.Quote(a.Sha256))
	}
	if a.Size < 0 {
		return bad("size %d is negative", a.Size)
	}
	if a.SignedBy != "" {
		if n := len(a.SignedBy); n != 40 && n != 64 {
			return bad("signedBy %s is not a 40 or 64 hex digit fingerprint", coordpart.Quote(a.SignedBy))
		}
		if _, err := hex.DecodeString(a.SignedBy); err != nil || strings.ToUpper(a.SignedBy) != a.SignedBy {
			return bad("signedBy %s is not upper-case hex", coordpart.Quote(a.SignedBy))
		}
	}
	return nil
}

// Check is CheckArtifact on every artifact, and no file name twice.
func (l *File) Check() error {
	seen := make(map[string]bool, len(l.Artifacts))
	for _, a := range l.Artifacts {
		if err := CheckArtifact(a); err != nil {
			return err
		}
		if seen[a.File] {
			return fmt.Errorf("%w: artifact %s appears twice", ErrBadLock, coordpart.Quote(a.File))
		}
		seen[a.File] = true
	}
	return nil
}

// MaxSize bounds a lockfile (16 MiB, some 50,000 artifacts).
const MaxSize = 16 << 20

// Read reads a lockfile from path: a regular file of at most MaxSize bytes
// (a FIFO or /dev/zero is refused before it is read, errdefs.Invalid). A
// missing file gives an error that satisfies errors.Is(err, os.ErrNotExist).
func Read(path string) (*File, error) {
	data, err := localfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("lockfile %w", err)
	}
	return Parse(path, data)
}

// Write normalizes l and writes it to path atomically (temp file + rename).
func Write(path string, l *File) error {
	l.Normalize()
	// A lock prebake writes is always one Parse accepts.
	if err := l.Check(); err != nil {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("lockfile %s: not written: %w", path, err))
	}
	data, err := l.Marshal()
	if err != nil {
		return errdefs.New(errdefs.Internal, fmt.Errorf("lockfile %s: %w", path, err))
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("writing lockfile %s: %w", path, err))
	}
	return nil
}
