package layers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// WarnSparkPatch: a Spark module of the base's Spark line but another
// patch release (spark-sql-kafka 3.5.7 on Spark 3.5.9). It is reported,
// but only a strictness that names it fails on it: a module of another
// line (3.4 on 3.5) is WarnSparkVersion.
const WarnSparkPatch = "spark-patch"

// StrictDefault are the kinds a bare strict (--strict, strict: true)
// fails on: every kind but WarnSparkPatch.
var StrictDefault = []string{WarnScalaBinary, WarnSparkVersion, WarnHadoopVersion, WarnNoSpark}

// StrictKinds are every warning kind a strictness may name.
var StrictKinds = []string{WarnScalaBinary, WarnSparkVersion, WarnSparkPatch, WarnHadoopVersion, WarnNoSpark}

// ParseStrict reads a strictness: "true" (or "all") is StrictDefault,
// "false" or "" is none (nil), else a comma-separated list of kinds
// (StrictKinds), which may name "all" too. An unknown kind is an error
// of kind BadArgument that lists the known ones.
func ParseStrict(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "", "false":
		return nil, nil
	case "true", "all":
		return slices.Clone(StrictDefault), nil
	}
	var kinds []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "all":
			kinds = append(kinds, StrictDefault...)
		case slices.Contains(StrictKinds, k):
			kinds = append(kinds, k)
		default:
			return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("unknown strict kind %q (known: all, %s)", k, strings.Join(StrictKinds, ", ")))
		}
	}
	out := []string{}
	for _, k := range StrictKinds {
		if slices.Contains(kinds, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// StrictWarnings are the warnings of ws whose kind is in kinds (nil kinds:
// StrictDefault): those a strict check fails on.
func StrictWarnings(ws []Warning, kinds []string) []Warning {
	if kinds == nil {
		kinds = StrictDefault
	}
	var out []Warning
	for _, w := range ws {
		if slices.Contains(kinds, w.Kind) {
			out = append(out, w)
		}
	}
	return out
}

// sparkLine is a Spark version's major.minor ("3.5.7" → "3.5").
func sparkLine(v string) string {
	p := strings.SplitN(v, ".", 3)
	if len(p) < 2 {
		return v
	}
	return p[0] + "." + p[1]
}
