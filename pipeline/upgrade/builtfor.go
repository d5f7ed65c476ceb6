package upgrade

import (
	"context"
	"errors"
	"slices"

	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/maven"
	"github.com/prebake/prebake/resolver"
)

// maxBuiltForVersions bounds the versions of one artifact whose POMs are
// read to find the newest built for the target line.
const maxBuiltForVersions = 30

// pomFetcher reads POMs through the resolution's Source (its chain,
// cache and credentials).
type pomFetcher struct{ src resolver.Source }

func (f pomFetcher) FetchPOM(ctx context.Context, g, a, v string) ([]byte, string, error) {
	pf, err := f.src.POM(ctx, g, a, v)
	if err != nil {
		return nil, "", err
	}
	return pf.Data, pf.URL, nil
}

// builtFor is the Spark line a third-party build was compiled against:
// the major.minor of the first org.apache.spark dependency of its
// effective POM (any scope: Delta's are provided), "" when it declares
// none or the POM cannot be read (the resolution reports that).
func builtFor(ctx context.Context, l *maven.Loader, c resolver.Coordinate) string {
	m, err := l.Load(ctx, c.Group, c.Artifact, c.Version)
	if err != nil {
		return ""
	}
	for _, d := range m.Dependencies {
		if d.Group == "org.apache.spark" && d.Version != "" {
			return revision.MajorMinor(d.Version)
		}
	}
	return ""
}

// checkBuiltFor turns a coordinate mapped to a build of another Spark
// line (io.delta:delta-spark_2.13:3.3.2, built against Spark 3.5, for a
// 4.0 target) into NoTargetBuild with the newest version built for the
// target line (Newest; left out when none of the newest
// maxBuiltForVersions is); built is the build ruled out. Spark's own modules, and builds that name no
// Spark dependency, are left as they are.
func checkBuiltFor(ctx context.Context, src resolver.Source, l *maven.Loader, co Coordinate, toLine string) (_ Coordinate, built string, _ error) {
	if co.To == "" || co.Change == NoTargetBuild || co.Change == SparkModule {
		return co, "", nil
	}
	cs, err := resolver.ParseCoordinates(co.To)
	if err != nil || len(cs) != 1 || cs[0].Group == "org.apache.spark" {
		return co, "", nil
	}
	t := cs[0]
	line := builtFor(ctx, l, t)
	if line == "" || line == toLine {
		return co, "", nil
	}
	vs, err := src.Versions(ctx, t.Group, t.Artifact)
	if err != nil && !errors.Is(err, resolver.ErrNotFound) {
		return Coordinate{}, "", err
	}
	var rel []string
	for _, v := range vs {
		if isRelease(v) {
			rel = append(rel, v)
		}
	}
	slices.SortFunc(rel, func(a, b string) int { return revision.Compare(b, a) })
	out := Coordinate{From: co.From, Change: NoTargetBuild, BuiltFor: line}
	for i, v := range rel {
		if i == maxBuiltForVersions {
			break
		}
		c := t
		c.Version = v
		if builtFor(ctx, l, c) == toLine {
			out.Newest, out.To = v, c.String()
			break
		}
	}
	return out, t.String(), nil
}
