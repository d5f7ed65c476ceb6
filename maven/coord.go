package maven

import (
	"fmt"

	"github.com/prebake/prebake/internal/coordpart"
)

// ErrInvalidCoordinate is matched (errors.Is) by every coordinate part that
// CheckPart rejects.
var ErrInvalidCoordinate = coordpart.ErrInvalidCoordinate

// Coordinate fields, as CheckPart names them in errors.
const (
	FieldGroup      = coordpart.FieldGroup
	FieldArtifact   = coordpart.FieldArtifact
	FieldVersion    = coordpart.FieldVersion
	FieldClassifier = coordpart.FieldClassifier
	FieldType       = coordpart.FieldType
)

// CheckPart is the one validator of a coordinate part (coordpart.CheckPart):
// a part must not be "." or "..", nor hold a character of `/\:%?#`, NUL or
// another control character, or invalid UTF-8. An empty part passes. The
// error matches ErrInvalidCoordinate and quotes the value.
func CheckPart(field, value string) error { return coordpart.CheckPart(field, value) }

// Quote is s quoted for an error message, cut to its first 200 bytes.
func Quote(s string) string { return coordpart.Quote(s) }

// CheckParts is CheckPart on groupId, artifactId, version[, classifier[,
// type]], in that order (at most five parts).
func CheckParts(parts ...string) error { return coordpart.CheckParts(parts...) }

// CheckCoord is CheckPart on a module's groupId, artifactId and version.
func CheckCoord(c Coord) error { return CheckParts(c.Group, c.Artifact, c.Version) }

// check is CheckPart on every part of a dependency.
func (d Dependency) check() error {
	if err := CheckParts(d.Group, d.Artifact, d.Version, d.Classifier, d.Type); err != nil {
		return fmt.Errorf("dependency %s:%s: %w", quoteBad(d.Group), quoteBad(d.Artifact), err)
	}
	return nil
}

// quoteBad prints a part for an error: as is when harmless, else quoted.
func quoteBad(s string) string {
	if CheckPart("", s) == nil && len(s) <= 200 {
		return s
	}
	return Quote(s)
}
