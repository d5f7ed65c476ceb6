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
	for i, a := range l.Artifacts {
		if a.Coord == "" || a.File == "" || len(a.Sha256) != 64 {
			return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: artifact %d (%q) lacks coord, file or a sha256", name, i, a.File)
		}
		if _, err := hex.DecodeString(a.Sha256); err != nil {
			return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: artifact %q: sha256 is not hex", name, a.File)
		}
		if strings.ContainsAny(a.File, `/\`) {
			return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: artifact file %q must be a bare file name", name, a.File)
		}
	}
	if l.LockHash != "" && l.LockHash != l.Hash() {
		return nil, exitcode.Errorf(exitcode.DataErr, "lockfile %s: lockHash %s does not match its artifacts (%s); was it edited by hand?", name, l.LockHash, l.Hash())
	}
	l.LockHash = l.Hash()
	return &l, nil
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
