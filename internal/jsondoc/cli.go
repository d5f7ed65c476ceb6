package jsondoc

import (
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline/bundle"
	"github.com/prebake/prebake/submit/connect"
)

// The documents the CLI itself composes. docs/json-output.md describes
// them, docs/schemas holds their schemas and testdata/json an example of
// each; a change of a field fails cmd's TestJSONGoldens.

// Error is what a command prints when it fails before it has printed its
// own result, and what the result file holds when the command has no
// result of its own.
type Error struct {
	ExitCode int      `json:"exitCode"`
	Meaning  string   `json:"meaning"`
	Source   string   `json:"source"`
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings"`
}

// Resolve is a resolution: the lock's artifacts, the evicted modules and
// the dependency tree (Evicted and Tree are empty when the lock was used).
type Resolve struct {
	LockHash  string             `json:"lockHash"`
	FromLock  bool               `json:"fromLock"`
	Artifacts []ResolvedArtifact `json:"artifacts"`
	Evicted   []Evicted          `json:"evicted"`
	Tree      []*Tree            `json:"tree"`
	// Wheels are the Python half's wheels (--py-requirements), sorted by
	// name; absent for a resolution of jars only.
	Wheels []ResolvedWheel `json:"wheels,omitempty"`
}

// ResolvedWheel is one locked wheel and where it is in the cache.
type ResolvedWheel struct {
	Name       string `json:"name"`    // PEP 503 normalized project name
	Version    string `json:"version"` // normalized PEP 440 version
	File       string `json:"file"`    // PEP 427 file name
	Sha256     string `json:"sha256"`
	Size       int64  `json:"size"`
	Repository string `json:"repository"` // the index that served it, without userinfo
	Path       string `json:"path"`
}

// ResolvedArtifact is one locked jar and where it is in the cache.
type ResolvedArtifact struct {
	Coord      string `json:"coord"`
	File       string `json:"file"`
	Sha256     string `json:"sha256"`
	Size       int64  `json:"size"`
	Repository string `json:"repository"`
	Path       string `json:"path"`
	SignedBy   string `json:"signedBy,omitempty"` // when signatures were verified
}

// Evicted is a module version that lost a conflict, and the version that won.
type Evicted struct {
	Module string `json:"module"`
	By     string `json:"by"`
}

// Tree is a node of the dependency tree.
type Tree struct {
	Coord    string  `json:"coord"`
	Evicted  bool    `json:"evicted"`
	By       string  `json:"by,omitempty"`
	Children []*Tree `json:"children,omitempty"`
}

// Outdated lists the lock's direct packages that have newer versions;
// Written and LockHash say whether the lock was rewritten.
type Outdated struct {
	Lock     string            `json:"lock"`
	Packages []OutdatedPackage `json:"packages"`
	Written  bool              `json:"written"`
	LockHash string            `json:"lockHash"`
}

// OutdatedPackage is one package: Latest is "" when none is newer; Newer
// is oldest first.
type OutdatedPackage struct {
	Module  string   `json:"module"`
	Current string   `json:"current"`
	Latest  string   `json:"latest"`
	Newer   []string `json:"newer"`
}

// Why says why each module matching Module is on the classpath.
type Why struct {
	Module   string      `json:"module"`
	LockHash string      `json:"lockHash"`
	FromLock bool        `json:"fromLock"`
	Modules  []WhyModule `json:"modules"`
}

// WhyModule is one module: its surviving versions ([] when all were
// evicted), the paths from the roots to it (Truncated past 1000), its
// versions that lost and the conflicts its own direct dependencies won.
type WhyModule struct {
	Module    string      `json:"module"`
	Chosen    []string    `json:"chosen"`
	Paths     []WhyPath   `json:"paths"`
	Truncated bool        `json:"truncated"`
	Evicted   []Evicted   `json:"evicted"`
	Evicts    []WhyEvicts `json:"evicts"`
}

// WhyPath is one path, root first.
type WhyPath struct {
	Path    []string `json:"path"`
	Evicted bool     `json:"evicted"`
	By      string   `json:"by"`
}

// WhyEvicts is a conflict won through Via.
type WhyEvicts struct {
	Via     string `json:"via"`
	Winner  string `json:"winner"`
	Evicted string `json:"evicted"`
}

// Keys are the keys of a keyring (or the keys just added to it).
type Keys struct {
	Keyring string          `json:"keyring"`
	Keys    []pgpverify.Key `json:"keys"`
}

// Init is what setting up a job wrote: the config file and the lock, and
// the command to run next.
type Init struct {
	Config   string `json:"config"`
	Lock     string `json:"lock"`
	LockHash string `json:"lockHash"`
	Jars     int    `json:"jars"`
	Next     string `json:"next"`
	// ConfigKept: init ran again and the file was kept as it was;
	// Changes: what changed in the lock it replaced ("+ g:a:v", "- g:a:v",
	// "~ g:a: 1.0 -> 2.0").
	ConfigKept bool     `json:"configKept"`
	Changes    []string `json:"changes"`
}

// ConnectAdd is a push of the lock's jars to a Spark Connect session.
type ConnectAdd struct {
	*connect.Result
	LockHash string `json:"lockHash"`
}

// BakeImage is a bake: layers.Result plus the Spark settings that run it
// and, for a lock with wheels, its Python half.
type BakeImage struct {
	*layers.Result
	SparkConf map[string]string `json:"sparkConf"`
	Python    *BakePython       `json:"python,omitempty"`
}

// BakePython is the Python half a bake placed (bake image, bake s3): the
// target the wheels were chosen for, where that came from, where the
// wheels went and the wheels.
type BakePython struct {
	// Version is the target's Python (major.minor), Platform its platform
	// tag (manylinux_2_36_x86_64).
	Version  string `json:"version"`
	Platform string `json:"platform"`
	// TargetFrom says where the target came from: "flags", "image REF"
	// (the base's python3, C library and architecture) or "lock" (the
	// target the lock records).
	TargetFrom string `json:"targetFrom"`
	// Dir is the image's site-packages directory (on its PYTHONPATH);
	// bake image only.
	Dir string `json:"dir,omitempty"`
	// Archive is the store's site-packages archive URL (spark.archives);
	// bake s3 only.
	Archive string       `json:"archive,omitempty"`
	Wheels  []BakedWheel `json:"wheels"`
}

// BakedWheel is one wheel of a bake, as the lock has it.
type BakedWheel struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	File    string `json:"file"`
	Sha256  string `json:"sha256"`
	Size    int64  `json:"size"`
}

// BundleImport is an import: bundle.ImportResult plus what it wrote (Cache
// or Store left out when not written).
type BundleImport struct {
	*bundle.ImportResult
	Cache string `json:"cache,omitempty"`
	Store string `json:"store,omitempty"`
	Lock  string `json:"lock"`
}
