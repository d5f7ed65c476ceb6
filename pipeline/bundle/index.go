// Package bundle carries a locked jar set across an air gap: Export writes
// a lock's jars, the lock and its SBOM as one content-addressed,
// reproducible bundle (an OCI artifact in a registry or an OCI layout, or
// one tar file); Import verifies every byte of one against the lock inside
// it and fills a cache, with nothing fetched from a repository.
//
// A bundle is an index (index.json) and the files it lists, in its order:
//
//	prebake.lock     the lock (application/vnd.prebake.lock.v1+json)
//	sbom.cdx.json    its CycloneDX SBOM (application/vnd.cyclonedx+json)
//	jars/<file>      each locked jar, in file order (application/java-archive)
//	wheels/<file>    each locked wheel of the Python half, in file order
//	                 (application/zip); none for a lock of jars only, whose
//	                 bundle is what it always was
//	signatures/<file>.asc  the cached OpenPGP signature of each jar whose
//	                 lock entry records a signer (signedBy), in file order
//	                 (application/pgp-signature); none when no jar records one
//
// The tar form holds index.json first, then the files, as regular files
// with a fixed mtime (SOURCE_DATE_EPOCH, else 1970-01-01T00:00:01Z), mode
// 0644 and owner 0. The OCI form is an image manifest of artifactType
// ArtifactType whose config is the index (IndexMediaType) and whose blobs
// are the files, each named by org.opencontainers.image.title.
//
// What a frozen run (one that only fetches the locked jars and wheels)
// reads from a cache is the lock's artifacts, by sha256: that is what a
// bundle carries (POMs and index pages are read only to resolve afresh),
// and, for a lock written with signatures verified, each jar's signature,
// which a frozen run checks again offline. Wheels carry no signature.
// An older prebake refuses a bundle with wheels (its index names a
// directory it does not know), as it refuses their lock.
package bundle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/lock"
)

// The media types and names of a bundle.
const (
	ArtifactType   = "application/vnd.prebake.bundle.v1"
	IndexMediaType = "application/vnd.prebake.bundle.index.v1+json"
	LockMediaType  = "application/vnd.prebake.lock.v1+json"
	SBOMMediaType  = "application/vnd.cyclonedx+json"
	JarMediaType   = "application/java-archive"
	WheelMediaType = "application/zip"
	SigMediaType   = "application/pgp-signature"

	IndexName = "index.json"
	LockName  = "prebake.lock"
	SBOMName  = "sbom.cdx.json"
	JarDir    = "jars/"
	WheelDir  = "wheels/"
	SigDir    = "signatures/"
	SigExt    = ".asc"

	// IndexVersion is the index schema version.
	IndexVersion = 1
	// LockAnnotation carries the lock hash on the OCI manifest, as on a
	// baked image.
	LockAnnotation = "dev.prebake.lock"
)

// Bounds of what Import reads.
const (
	// MaxIndex bounds index.json (16 MiB: some 60,000 entries).
	MaxIndex = 16 << 20
	// MaxSBOM bounds sbom.cdx.json.
	MaxSBOM = 64 << 20
	// MaxManifest bounds the OCI manifest.
	MaxManifest = 32 << 20
	// MaxSignature bounds one signature (.asc), as a fetched one is
	// bounded; MaxSignatures all of them (they are held in memory).
	MaxSignature  = pgpverify.MaxSignatureSize
	MaxSignatures = 64 << 20
)

// Limits bound a bundle: its entry count, each file's size and the total.
type Limits struct {
	Entries int
	File    int64
	Total   int64
}

// DefaultLimits: 50,000 jars, 4 GiB a file, 64 GiB in all.
var DefaultLimits = Limits{Entries: 50_000, File: 4 << 30, Total: 64 << 30}

// ErrBadBundle is matched (errors.Is) by every bundle Import refuses: a
// malformed or tampered index, lock, SBOM or jar, an extra, missing or
// misplaced file. Such errors are errdefs.Invalid.
var ErrBadBundle = errors.New("bad bundle")

// Index is index.json: every file of the bundle after it, in order.
type Index struct {
	Files    []Entry `json:"files"`
	LockHash string  `json:"lockHash"`
	Version  int     `json:"version"`
}

// Entry is one file of a bundle.
type Entry struct {
	Path   string `json:"path"`
	Sha256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// bad is an ErrBadBundle error of bundle name.
func bad(name, format string, args ...any) error {
	return errdefs.New(errdefs.Invalid, fmt.Errorf("%w %s: %s", ErrBadBundle, name, fmt.Sprintf(format, args...)))
}

// ParseIndex parses and checks index.json of bundle name (used in errors,
// which name the field): no unknown field; version IndexVersion; lockHash
// and every sha256 64 hex digits; prebake.lock, sbom.cdx.json, then
// jars/<file> with file a bare name (safepath.Name), sorted, none twice,
// then wheels/<file> likewise, then signatures/<file>.asc likewise; sizes
// within lim.
func ParseIndex(name string, data []byte, lim Limits) (*Index, error) {
	var ix Index
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, bad(name, "%s: %v", IndexName, err)
	}
	if dec.More() {
		return nil, bad(name, "%s: data after the JSON object", IndexName)
	}
	if ix.Version != IndexVersion {
		return nil, bad(name, "%s: version %d is not %d", IndexName, ix.Version, IndexVersion)
	}
	if !isHex64(ix.LockHash) {
		return nil, bad(name, "%s: lockHash %s is not 64 hex digits", IndexName, coordpart.Quote(ix.LockHash))
	}
	if len(ix.Files) < 2 {
		return nil, bad(name, "%s: files: %d entries, want %s and %s first", IndexName, len(ix.Files), LockName, SBOMName)
	}
	if n := len(ix.blobs()); n > lim.Entries {
		return nil, bad(name, "%s: files: %d jars and wheels, more than %d", IndexName, n, lim.Entries)
	}
	if n := len(ix.sigs()); n > lim.Entries {
		return nil, bad(name, "%s: files: %d signatures, more than %d", IndexName, n, lim.Entries)
	}
	var total, sigs int64
	prev, prevDir := "", JarDir
	for i, e := range ix.Files {
		field := fmt.Sprintf("%s: files[%d]", IndexName, i)
		switch {
		case i == 0 && e.Path != LockName, i == 1 && e.Path != SBOMName:
			return nil, bad(name, "%s.path %s: want %s", field, coordpart.Quote(e.Path), []string{LockName, SBOMName}[i])
		case i >= 2:
			dir := JarDir
			for _, d := range []string{WheelDir, SigDir} {
				if strings.HasPrefix(e.Path, d) {
					dir = d
				}
			}
			if dirRank[dir] < dirRank[prevDir] {
				return nil, bad(name, "%s.path %s: after the %s (jars, wheels, then signatures)", field, coordpart.Quote(e.Path), strings.TrimSuffix(prevDir, "/"))
			}
			if dir != prevDir {
				prev = ""
			}
			file, ok := strings.CutPrefix(e.Path, dir)
			if !ok {
				return nil, bad(name, "%s.path %s is not under %s, %s or %s", field, coordpart.Quote(e.Path), JarDir, WheelDir, SigDir)
			}
			if err := safepath.Name(file); err != nil {
				return nil, bad(name, "%s.path: %v", field, err)
			}
			if dir == SigDir && !strings.HasSuffix(file, SigExt) {
				return nil, bad(name, "%s.path %s does not end in %s", field, coordpart.Quote(e.Path), SigExt)
			}
			if file <= prev && dir == prevDir {
				return nil, bad(name, "%s.path %s: not after %s (sorted, once each)", field, coordpart.Quote(e.Path), coordpart.Quote(dir+prev))
			}
			prev, prevDir = file, dir
		}
		if !isHex64(e.Sha256) {
			return nil, bad(name, "%s.sha256 %s is not 64 hex digits", field, coordpart.Quote(e.Sha256))
		}
		max := lim.File
		switch {
		case i == 0:
			max = lock.MaxSize
		case i == 1:
			max = MaxSBOM
		case prevDir == SigDir:
			max = MaxSignature
		}
		if e.Size < 0 || e.Size > max {
			return nil, bad(name, "%s.size %d is not within 0..%d", field, e.Size, max)
		}
		if i >= 2 && prevDir == SigDir {
			if sigs += e.Size; sigs > MaxSignatures {
				return nil, bad(name, "%s: the signatures add up to more than %d bytes", IndexName, MaxSignatures)
			}
		}
		if total += e.Size; total > lim.Total {
			return nil, bad(name, "%s: the files add up to more than %d bytes", IndexName, lim.Total)
		}
	}
	return &ix, nil
}

// dirRank orders the directories of a bundle's files.
var dirRank = map[string]int{JarDir: 0, WheelDir: 1, SigDir: 2}

// blobs are the jar and wheel entries of ix; sigs the signature entries,
// after them.
func (ix *Index) blobs() []Entry {
	rest := ix.Files[2:]
	for i, e := range rest {
		if strings.HasPrefix(e.Path, SigDir) {
			return rest[:i]
		}
	}
	return rest
}

func (ix *Index) sigs() []Entry { return ix.Files[2+len(ix.blobs()):] }

// blobPath is the bundle path of a locked artifact: jars/<file> for a
// jar, wheels/<file> for a wheel.
func blobPath(a lock.Artifact) string {
	if a.IsJar() {
		return JarDir + a.File
	}
	return WheelDir + a.File
}

// sigPath is the bundle path of the signature of a jar file.
func sigPath(file string) string { return SigDir + file + SigExt }

// checkLock checks that lf is the lock ix names (its lock hash), that the
// jars of ix are lf's artifacts exactly, and that each signature of ix is
// of a jar whose lock entry records a signer.
func (ix *Index) checkLock(name string, lf *lock.File) error {
	if h := lf.Hash(); h != ix.LockHash {
		return bad(name, "%s: lock hash %s, the index says %s", LockName, h, ix.LockHash)
	}
	signed := map[string]bool{}
	for _, a := range lf.Artifacts {
		if a.SignedBy != "" {
			signed[sigPath(a.File)] = true
		}
	}
	for i, e := range ix.sigs() {
		if !signed[e.Path] {
			return bad(name, "%s: files[%d] %s is not the signature of a jar the lock records a signer of", IndexName, 2+len(ix.blobs())+i, e.Path)
		}
	}
	want := map[string]lock.Artifact{}
	for _, a := range lf.Artifacts {
		want[blobPath(a)] = a
	}
	for i, e := range ix.blobs() {
		a, ok := want[e.Path]
		if !ok {
			return bad(name, "%s: files[%d] %s is not an artifact of the lock", IndexName, i+2, e.Path)
		}
		if a.Sha256 != e.Sha256 || a.Size != e.Size {
			return bad(name, "%s: files[%d] %s: sha256 %s size %d, the lock says %s size %d", IndexName, i+2, e.Path, e.Sha256, e.Size, a.Sha256, a.Size)
		}
		delete(want, e.Path)
	}
	for p := range want {
		return bad(name, "%s: the lock's %s is missing", IndexName, p)
	}
	return nil
}

func isHex64(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 64 && err == nil && strings.ToLower(s) == s
}

// mediaType is the media type of the OCI blob of the i-th index entry,
// of path.
func mediaType(i int, path string) string {
	switch {
	case i == 0:
		return LockMediaType
	case i == 1:
		return SBOMMediaType
	case strings.HasPrefix(path, SigDir):
		return SigMediaType
	case strings.HasPrefix(path, WheelDir):
		return WheelMediaType
	}
	return JarMediaType
}
