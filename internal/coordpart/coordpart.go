// Package coordpart is the one validator of a Maven coordinate part. It
// is a leaf, so that the lock package checks its coordinates without the
// POM model; package maven re-exports it.
package coordpart

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidCoordinate is matched (errors.Is) by every coordinate part that
// CheckPart rejects.
var ErrInvalidCoordinate = errors.New("invalid coordinate")

// Coordinate fields, as CheckPart names them in errors.
const (
	FieldGroup      = "groupId"
	FieldArtifact   = "artifactId"
	FieldVersion    = "version"
	FieldClassifier = "classifier"
	FieldType       = "type"
)

// badPartChars are the characters no coordinate part may hold: path
// separators ("/" also after the "." → "/" of a groupId), ":" (the
// separator of g:a:v[:classifier] in a lock), and "%", "?" and "#", which
// a repository URL would read as an escape, a query or a fragment. Maven
// itself refuses `\/:"<>|?*` in versions (ModelValidator's
// ILLEGAL_VERSION_CHARS) and anything but [A-Za-z0-9_.-] in ids.
const badPartChars = `/\:%?#`

// CheckPart is the one validator of a coordinate part (groupId, artifactId,
// version, classifier or type), whatever its source: argv, a POM, a
// parent, a BOM, a relocation, maven-metadata.xml or a lock. Every part
// becomes a path segment (repository paths, cache and retrieve files, tar
// entries, store keys), so it must not be "." or "..", nor hold a
// character of `/\:%?#`, NUL or another control character, or invalid
// UTF-8. An empty part passes (callers that need one say so). The error
// matches ErrInvalidCoordinate and quotes the value.
func CheckPart(field, value string) error {
	switch {
	case value == "." || value == "..":
		return fmt.Errorf("%w: %s %q is a relative path", ErrInvalidCoordinate, field, value)
	case !utf8.ValidString(value):
		return fmt.Errorf("%w: %s %s is not valid UTF-8", ErrInvalidCoordinate, field, Quote(value))
	}
	for _, r := range value {
		switch {
		case strings.ContainsRune(badPartChars, r):
			return fmt.Errorf("%w: %s %s holds %q", ErrInvalidCoordinate, field, Quote(value), r)
		case unicode.IsControl(r):
			return fmt.Errorf("%w: %s %s holds the control character %U", ErrInvalidCoordinate, field, Quote(value), r)
		}
	}
	return nil
}

// Quote is s quoted for an error message, cut to its first 200 bytes.
func Quote(s string) string {
	const max = 200
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// partFields are the fields of CheckParts, in order.
var partFields = [...]string{FieldGroup, FieldArtifact, FieldVersion, FieldClassifier, FieldType}

// CheckParts is CheckPart on groupId, artifactId, version[, classifier[,
// type]], in that order (at most five parts).
func CheckParts(parts ...string) error {
	for i, p := range parts {
		if err := CheckPart(partFields[i], p); err != nil {
			return err
		}
	}
	return nil
}
