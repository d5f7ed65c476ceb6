package layers

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/revision"
)

// WarnSparkPatch: a Spark module of the base's Spark line but another
// patch release (spark-sql-kafka 3.5.7 on Spark 3.5.9). It is reported,
// but only a strictness that names it fails on it: a module of another
// line (3.4 on 3.5) is WarnSparkVersion.
const WarnSparkPatch = "spark-patch"

// StrictDefault are the kinds a bare strictness ("true") fails on: every kind but WarnSparkPatch.
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

// BaseReport reads the Spark, Scala and Hadoop versions of a base image
// (a registry reference or oci:DIR[:TAG]) as a bake would (its jars under
// sparkHome/jars, "" is /opt/spark; the first image of an index): the
// report of no artifact. Registry errors are typed as a bake's are.
func BaseReport(ctx context.Context, base, sparkHome string, opts ...Option) (*Report, error) {
	home, err := cleanSparkHome(sparkHome)
	if err != nil {
		return nil, err
	}
	r, err := parseRef(base)
	if err != nil {
		return nil, err
	}
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	o.scopeAuth(r)
	b, err := loadBase(ctx, r, o)
	if err != nil {
		return nil, err
	}
	imgs, err := selectImages(b, nil, base)
	if err != nil {
		return nil, err
	}
	if len(imgs) == 0 {
		return nil, errdefs.Errorf(errdefs.NotFound, "base %s: no image in its index", base)
	}
	sparkJars := path.Join(home, "jars")
	bj, err := baseJars(ctx, imgs[0].img, []string{sparkJars}, processIndex, o.cacheDir)
	if err != nil {
		return nil, registryError(err, "reading base "+base)
	}
	return conflictReport(nil, nil, bj, sparkJars), nil
}

// IsHadoopModule tells whether module (group:artifact) is a Hadoop
// connector (hadoop-aws, hadoop-azure, …) that links against the exact
// Hadoop release of the base (a hadoop-version warning when it differs).
func IsHadoopModule(module string) bool { return hadoopModules[module] }

// reclassify makes the spark-version warnings of a verdict stored before
// spark-patch existed spark-patch when the module is of baseSpark's line,
// as a fresh report would say.
func reclassify(ws []Warning, baseSpark string) []Warning {
	if baseSpark == "" {
		return ws
	}
	out := slices.Clone(ws)
	for i, w := range out {
		if w.Kind == WarnSparkVersion && revision.MajorMinor(parseCoord(w.Coord).version) == revision.MajorMinor(baseSpark) {
			out[i].Kind = WarnSparkPatch
		}
	}
	return out
}
