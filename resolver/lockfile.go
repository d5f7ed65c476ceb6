package resolver

import (
	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/lock"
)

// The lockfile lives in the lock package; the resolver produces a
// lock.File. These names keep callers written against the resolver
// compiling.
type (
	// Lockfile is lock.File.
	Lockfile = lock.File
	// Inputs is lock.Inputs.
	Inputs = lock.Inputs
	// Artifact is lock.Artifact.
	Artifact = lock.Artifact
)

// LockVersion is lock.SchemaVersion.
const LockVersion = lock.SchemaVersion

// ErrBadLock is lock.ErrBadLock.
var ErrBadLock = lock.ErrBadLock

// ReadLock is lock.Read.
func ReadLock(path string) (*Lockfile, error) { return lock.Read(path) }

// WriteLock is lock.Write.
func WriteLock(path string, l *Lockfile) error { return lock.Write(path, l) }

// CompareRevisions compares two revisions with Ivy's latest-revision
// strategy (revision.Compare).
func CompareRevisions(a, b string) int { return revision.Compare(a, b) }
