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

// The lockfile schema versions. A lock with jars only is version 1, byte
// for byte what prebake wrote before wheels existed; a lock with a Python
// half (a non-jar artifact or Inputs.Python) is version 2, so that a
// prebake that knows only jars refuses it instead of treating a wheel as a
// jar. See docs/design.md, "The lock's artifact kinds".
const (
	SchemaVersion      = 1 // jars only
	SchemaVersionKinds = 2 // artifacts of several kinds (jar, wheel)
	MaxSchemaVersion   = SchemaVersionKinds
)

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

// File is prebake.lock: the inputs of a resolution and the artifacts it
// gave (jars, and wheels for a PySpark job's Python half), sorted by file
// name, which is spark.jars order for the jars. Consumers that handle jars
// only read them through Jars and refuse another kind with JarsOnly. Field order is alphabetical so
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
	// Ivy is the Ivy the resolution followed when it is not 2.5.2/2.5.3:
	// "2.5.1" (a Spark line whose Ivy predates 2.5.2, IVY-1642, or that
	// Ivy chosen) or "2.6.0" (chosen ahead of Spark); else empty (and not
	// hashed). Check refuses another value.
	Ivy      string   `json:"ivy,omitempty"`
	Packages []string `json:"packages"`
	// Python is the Python half's inputs; nil (absent, not hashed) for a
	// lock with jars only.
	Python       *PythonInputs `json:"python,omitempty"`
	Repositories []string      `json:"repositories"`
}

// Artifact is one resolved artifact: a jar (Kind empty) or a wheel. The
// fields of one kind are empty in the other (Check refuses them).
type Artifact struct {
	Coord string `json:"coord,omitempty"` // jar: g:a:v[:classifier]
	// File is the jar's Spark-style name <g>_<a>-<v>[-<classifier>].jar, or
	// the wheel's PEP 427 file name. File names are unique across kinds.
	File string `json:"file"`
	// Kind is empty for a jar (written as no "kind", so a jar-only lock
	// reads and hashes as before wheels existed; "jar" is read as empty)
	// and KindWheel for a wheel.
	Kind       Kind   `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"` // wheel: the PEP 503 normalized project name
	Repository string `json:"repository"`     // the URL that served it (a wheel: its index), without userinfo
	Sha256     string `json:"sha256"`         // hex
	// SignedBy is the primary fingerprint (upper-case hex) of the OpenPGP
	// key whose signature (.asc) of the jar verified when the lock was
	// written with signatures verified; empty otherwise. It is not part of
	// the lock hash: the same jars are the same set.
	// Jars only.
	SignedBy string `json:"signedBy,omitempty"`
	Size     int64  `json:"size"`
	Version  string `json:"version,omitempty"` // wheel: the normalized PEP 440 version
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
	if p := in.Python; p != nil {
		// Only when present: a jar-only lock keeps its inputsHash.
		write("python-requirements", p.Requirements)
		write("python-indexes", p.Indexes)
		write("python-version", []string{p.Version})
		write("python-platforms", p.Platforms)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Hash returns the lock hash: the sha256 of the canonical artifacts list,
// one line per artifact in file order. It names the set everywhere. A jar's
// line is "coord, file, sha256", as before wheels existed, so a jar-only
// lock keeps its hash; another kind's line starts with its kind and has
// five fields ("wheel, name, version, file, sha256"), so it can never read
// as a jar's (whose first field holds a ':').
func (l *File) Hash() string {
	arts := slices.Clone(l.Artifacts)
	slices.SortFunc(arts, func(a, b Artifact) int { return strings.Compare(a.File, b.File) })
	var b strings.Builder
	b.WriteString("prebake-lock-v1\n")
	for _, a := range arts {
		if a.IsJar() {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", a.Coord, a.File, a.Sha256)
			continue
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", a.Kind, a.Name, a.Version, a.File, a.Sha256)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// Normalize sorts the artifacts by file name, writes a jar's kind as
// absent, and fills the hashes and the version (1 for jars only, 2 with a
// Python half).
func (l *File) Normalize() {
	slices.SortFunc(l.Artifacts, func(a, b Artifact) int { return strings.Compare(a.File, b.File) })
	for i := range l.Artifacts {
		if l.Artifacts[i].Kind == KindJar {
			l.Artifacts[i].Kind = ""
		}
	}
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
	if p := l.Inputs.Python; p != nil {
		for _, xs := range []*[]string{&p.Indexes, &p.Platforms, &p.Requirements} {
			if *xs == nil {
				*xs = []string{}
			}
		}
	}
	l.Inputs.InputsHash = ComputeInputsHash(l.Inputs)
	l.LockHash = l.Hash()
	l.Version = l.wantVersion()
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
		// A newer lock may have fields this prebake does not know: its
		// version is the clearer error.
		var v struct{ Version int }
		if json.Unmarshal(data, &v) == nil && v.Version > MaxSchemaVersion {
			l.Version = v.Version
			err = l.checkVersion()
		}
		return nil, errdefs.Errorf(errdefs.Invalid, "lockfile %s: %w", name, err)
	}
	if err := l.checkVersion(); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("lockfile %s: %w", name, err))
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

// CheckArtifact checks one locked artifact, from a lock or a store
// manifest. A jar: coord is g:a:v[:classifier] with every part passing
// maven.CheckPart (internal/coordpart) and none empty; file is a bare file
// name (safepath.Name); sha256 is 64 hex digits; size is not negative; no
// wheel field is set. A wheel: see checkWheel. Another kind is refused. The
// error names the field and matches ErrBadLock.
func CheckArtifact(a Artifact) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: artifact %s: %s", ErrBadLock, coordpart.Quote(a.File), fmt.Sprintf(format, args...))
	}
	switch a.Kind {
	case "", KindJar:
	case KindWheel:
		return checkWheel(a, bad)
	default:
		return bad("kind %s is not %q or %q", coordpart.Quote(string(a.Kind)), KindJar, KindWheel)
	}
	if err := safepath.Name(a.File); err != nil {
		return bad("file: %v", err)
	}
	if a.Name != "" || a.Version != "" {
		return bad("name and version are a wheel's fields, not a jar's (it has coord)")
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
	if err := checkContent(a, bad); err != nil {
		return err
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

// checkContent checks the fields every kind has: sha256 and size.
func checkContent(a Artifact, bad func(format string, args ...any) error) error {
	if len(a.Sha256) != 64 {
		return bad("sha256 %s is not 64 hex digits", coordpart.Quote(a.Sha256))
	}
	if _, err := hex.DecodeString(a.Sha256); err != nil {
		return bad("sha256 %s is not hex", coordpart.Quote(a.Sha256))
	}
	if a.Size < 0 {
		return bad("size %d is negative", a.Size)
	}
	return nil
}

// Check is CheckArtifact on every artifact, no file name twice (across
// kinds), no wheel project twice, and the Python half's inputs: present
// and valid when the lock has a wheel (the target they were chosen for).
func (l *File) Check() error {
	seen := make(map[string]bool, len(l.Artifacts))
	projects := map[string]bool{}
	for _, a := range l.Artifacts {
		if err := CheckArtifact(a); err != nil {
			return err
		}
		if seen[a.File] {
			return fmt.Errorf("%w: artifact %s appears twice", ErrBadLock, coordpart.Quote(a.File))
		}
		seen[a.File] = true
		if a.Kind == KindWheel {
			if projects[a.Name] {
				return fmt.Errorf("%w: artifact %s: name: wheel project %s appears twice (a lock has one target, so one wheel per project)", ErrBadLock, coordpart.Quote(a.File), coordpart.Quote(a.Name))
			}
			projects[a.Name] = true
		}
	}
	switch l.Inputs.Ivy {
	case "", "2.5.1", "2.6.0":
	default:
		return fmt.Errorf("%w: inputs.ivy: %s is not an Ivy prebake follows (\"2.5.1\", \"2.6.0\", or absent for 2.5.2/2.5.3)", ErrBadLock, coordpart.Quote(l.Inputs.Ivy))
	}
	if l.Inputs.Python != nil {
		if err := checkPythonInputs(*l.Inputs.Python); err != nil {
			return err
		}
	} else if len(projects) > 0 {
		return fmt.Errorf("%w: inputs.python: missing, but the lock has wheels (it records the target they were chosen for)", ErrBadLock)
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
