package lock

import (
	"errors"
	"fmt"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/coordpart"
)

// Kind is the kind of a locked artifact.
type Kind string

// The artifact kinds a lock holds.
const (
	// KindJar is a Maven jar. A lock writes it as no "kind" at all.
	KindJar Kind = "jar"
	// KindWheel is a Python wheel (PEP 427) of the job's Python half.
	KindWheel Kind = "wheel"
)

// IsJar reports whether a is a jar (its Kind is empty or KindJar).
func (a Artifact) IsJar() bool { return a.Kind == "" || a.Kind == KindJar }

// KindOf is a's kind, KindJar for an empty Kind.
func (a Artifact) KindOf() Kind {
	if a.Kind == "" {
		return KindJar
	}
	return a.Kind
}

// ErrUnsupportedKind is matched (errors.Is) when a consumer that handles
// some kinds only (jars, today: layers, s3store, the resolver's locked
// fetch, rewrite's sources) is given a lock holding another kind. It comes
// wrapped in errdefs.Invalid (exit 65): such a lock is refused, never read
// as if its wheels were jars.
var ErrUnsupportedKind = errors.New("unsupported artifact kind")

// OfKind returns the artifacts of kind k, in lock order. For KindJar and a
// lock with jars only it is l.Artifacts itself (not a copy): read it, do
// not modify it.
func (l *File) OfKind(k Kind) []Artifact {
	if k == KindJar && l.JarsOnly("") == nil {
		return l.Artifacts
	}
	var out []Artifact
	for _, a := range l.Artifacts {
		if a.KindOf() == k {
			out = append(out, a)
		}
	}
	return out
}

// Jars returns the lock's jars in lock order (spark.jars order). For a
// lock with jars only it is l.Artifacts itself.
func (l *File) Jars() []Artifact { return l.OfKind(KindJar) }

// Wheels returns the lock's wheels in lock order.
func (l *File) Wheels() []Artifact { return l.OfKind(KindWheel) }

// JarsOnly returns nil when every artifact of l is a jar. Otherwise it
// returns an errdefs.Invalid error matching ErrUnsupportedKind that names
// the first other artifact and what refused it (consumer, e.g. "bake
// image"; "" leaves it out).
func (l *File) JarsOnly(consumer string) error {
	for _, a := range l.Artifacts {
		if a.IsJar() {
			continue
		}
		who := "this prebake"
		if consumer != "" {
			who = consumer
		}
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s handles jars only, and the lock holds %s %s (%s %s)",
			ErrUnsupportedKind, who, a.KindOf(), coordpart.Quote(a.File), coordpart.Quote(a.Name), coordpart.Quote(a.Version)))
	}
	return nil
}

// Placeable returns nil when a consumer (e.g. "bake image") that places
// jars and, given their files (withWheels), wheels can place every artifact
// of l, and each artifact is valid (CheckArtifact). Otherwise the error is
// JarsOnly's for a kind it has no place for, or errdefs.Invalid naming the
// bad artifact.
func (l *File) Placeable(consumer string, withWheels bool) error {
	if !withWheels && len(l.Wheels()) > 0 {
		return l.JarsOnly(consumer) // as before wheels had a place
	}
	for _, a := range l.Artifacts {
		switch a.KindOf() {
		case KindJar, KindWheel:
		default:
			return l.JarsOnly(consumer)
		}
		if err := CheckArtifact(a); err != nil {
			return errdefs.New(errdefs.Invalid, fmt.Errorf("bake: %w", err))
		}
	}
	return nil
}

// HasPython reports whether l has a Python half: a non-jar artifact or
// Inputs.Python. Such a lock is SchemaVersionKinds.
func (l *File) HasPython() bool {
	return l.Inputs.Python != nil || l.JarsOnly("") != nil
}

// wantVersion is the version Normalize writes.
func (l *File) wantVersion() int {
	if l.HasPython() {
		return SchemaVersionKinds
	}
	return SchemaVersion
}

// checkVersion checks a read lock's version: one this prebake reads, and
// the one its content has (1 for jars only, 2 with a Python half), so that
// the version alone says whether a lock holds more than jars.
func (l *File) checkVersion() error {
	switch want := l.wantVersion(); {
	case l.Version > MaxSchemaVersion:
		return fmt.Errorf("version %d is newer than this prebake reads (versions %d to %d): upgrade prebake", l.Version, SchemaVersion, MaxSchemaVersion)
	case l.Version < SchemaVersion:
		return fmt.Errorf("unsupported version %d (want %d to %d)", l.Version, SchemaVersion, MaxSchemaVersion)
	case l.Version != want && want == SchemaVersionKinds:
		return fmt.Errorf("%w: version %d: a lock with wheels or inputs.python is version %d", ErrBadLock, l.Version, want)
	case l.Version != want:
		return fmt.Errorf("%w: version %d: a lock with jars only is version %d", ErrBadLock, l.Version, want)
	}
	return nil
}
