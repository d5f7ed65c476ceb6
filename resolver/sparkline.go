package resolver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/maven"
)

// Ivy251 is IvyOf's answer for the Spark versions whose Ivy predates 2.5.2
// (3.x before 3.5.9: Ivy 2.5.1 from 3.4, older before): reading a POM, it
// keeps one descriptor per g:a:v, so dependencies that differ only by
// classifier share it and a plain one beside a classified one is lost
// (IVY-1642, fixed in 2.5.2).
const Ivy251 = "2.5.1"

// IvyOf is the Ivy behaviour of Spark version v ("3.5.0", "4.1.4"):
// Ivy251, or "" for Ivy 2.5.2 and later (3.5.9+, 4.x; also v == "", the
// default). v needs its patch inside 3.5 (3.5.0–3.5.8 ship Ivy 2.5.1,
// 3.5.9 Ivy 2.5.3).
func IvyOf(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if len(v) > 64 {
		return "", errdefs.Errorf(errdefs.BadArgument, "Spark version %.64q…: longer than 64 bytes", v)
	}
	p := strings.SplitN(v, ".", 3)
	num := func(i int) (int, bool) {
		if i >= len(p) {
			return 0, false
		}
		s := p[i]
		if i == 2 { // the digits of a suffixed patch ("4.0.0-preview2")
			if j := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
				s = s[:j]
			}
		}
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0
	}
	major, ok1 := num(0)
	minor, ok2 := num(1)
	if !ok1 || !ok2 || major < 1 {
		return "", errdefs.Errorf(errdefs.BadArgument, "Spark version %q: want <major>.<minor>.<patch>, e.g. 3.5.9", v)
	}
	switch {
	case major >= 4:
		return "", nil
	case major < 3 || minor < 5:
		return Ivy251, nil
	case minor > 5:
		return "", nil
	}
	patch, ok := num(2)
	if !ok {
		return "", errdefs.Errorf(errdefs.BadArgument, "Spark version %q: 3.5 needs its patch (3.5.0–3.5.8 ship Ivy 2.5.1, 3.5.9 and later Ivy 2.5.3)", v)
	}
	if patch < 9 {
		return Ivy251, nil
	}
	return "", nil
}

// The Ivy versions prebake follows (Request.IvyVersion).
const (
	// Ivy253 is Ivy 2.5.2 and 2.5.3 (the same resolution): Spark 3.5.9
	// and 4.x.
	Ivy253 = "2.5.3"
	// Ivy260 is Ivy 2.6.0, which no Spark release ships yet (SPARK-58878
	// proposes it): a POM's dependencyManagement entry applies to a
	// dependency only when their type and classifier match too
	// (IVY-1654), and an ivySettings file may select the Maven-style
	// nearest conflict manager (IVY-813).
	Ivy260 = "2.6.0"
)

// KnownIvyVersions are the Ivy versions prebake follows, oldest first.
var KnownIvyVersions = []string{Ivy251, Ivy253, Ivy260}

// ErrUnknownIvyVersion is matched (errors.Is) by an Ivy version prebake
// does not follow; the error is errdefs.BadArgument and names
// KnownIvyVersions.
var ErrUnknownIvyVersion = errors.New("not an Ivy prebake follows")

// EffectiveIvy is the Ivy a resolution follows: ivyVersion, one of
// KnownIvyVersions, when set, else the Spark line's (Ivy251 before 3.5.9,
// else Ivy253; see IvyOf).
func EffectiveIvy(sparkVersion, ivyVersion string) (string, error) {
	line, err := IvyOf(sparkVersion)
	if err != nil {
		return "", err
	}
	if ivyVersion == "" {
		if line == "" {
			return Ivy253, nil
		}
		return line, nil
	}
	if !slices.Contains(KnownIvyVersions, ivyVersion) {
		return "", errdefs.New(errdefs.BadArgument, fmt.Errorf("unknown Ivy version %s (%w); prebake follows %s",
			maven.Quote(ivyVersion), ErrUnknownIvyVersion, strings.Join(KnownIvyVersions, ", ")))
	}
	return ivyVersion, nil
}

// lockIvy is what a lock's inputs.ivy records for the Ivy effective: ""
// for 2.5.2/2.5.3 (every lock written before the choice existed, so they
// keep their bytes and inputsHash), else the version, which is hashed.
func lockIvy(effective string) string {
	if effective == Ivy253 {
		return ""
	}
	return effective
}
