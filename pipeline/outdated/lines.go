package outdated

import (
	"context"
	"regexp"
	"strings"

	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
)

var (
	// scalaTagRe is a Scala binary suffix at the end of a version
	// (spark-packages: 0.8.4-spark3.5-s_2.12; others: 1.0_2.13).
	scalaTagRe = regexp.MustCompile(`(?:s_|_)(2\.1[0-3]|3)$`)
	// sparkLineRe is a Spark line named in a version (0.8.4-spark3.5-s_2.12).
	sparkLineRe = regexp.MustCompile(`spark(\d+\.\d+)`)
	// artifactScalaRe is the Scala suffix of an artifact id (delta-spark_2.12).
	artifactScalaRe = regexp.MustCompile(`_(2\.1[0-3]|3)$`)
)

// lines is what Input.WithinSparkLine keeps a package on; the zero value
// keeps nothing (every newer version is listed).
type lines struct {
	within bool
	// spark is the Spark version of the base (Input.Base) or of the lock's
	// spark-core; "" is each module's own line. capSpark (a base): no
	// Spark module newer than spark.
	spark    string
	capSpark bool
	// scala is the Scala binary of the base or the lock ("" is each
	// version's own suffix); hadoop its Hadoop release (hadoop-client-api),
	// "" when unknown: a Hadoop connector, and the AWS SDK bundle
	// hadoop-aws pins, then stays where it is.
	scala, hadoop string
}

// awsBundles are the AWS SDK bundles hadoop-aws pins (v1 up to Hadoop
// 3.3, v2 from 3.4): they follow hadoop-aws, never the newest release.
var awsBundles = map[string]bool{"com.amazonaws:aws-java-sdk-bundle": true, "software.amazon.awssdk:bundle": true}

// linesOf reads the lines to keep to: the base image's (Input.Base) else
// the lock's jars' (spark-core, scala-library, hadoop-client-api), read as
// a bake reads a base's.
func linesOf(ctx context.Context, lf *lock.File, in Input, log Logger) (lines, error) {
	l := lines{within: true}
	var r *layers.Report
	if in.Base != "" {
		var err error
		if r, err = layers.BaseReport(ctx, in.Base, in.SparkHome, in.BaseOptions...); err != nil {
			return l, err
		}
		l.capSpark = r.BaseSparkVersion != ""
		log.Printf("base %s: Spark %s, Scala %s, Hadoop %s", in.Base, orUnknown(r.BaseSparkVersion), orUnknown(r.BaseScalaBinary), orUnknown(r.BaseHadoopVersion))
	} else {
		// The lock's jars, named as a distribution names them.
		var jars []string
		for _, a := range lf.Artifacts {
			if p := strings.Split(a.Coord, ":"); len(p) == 3 {
				jars = append(jars, "/jars/"+p[1]+"-"+p[2]+".jar")
			}
		}
		r = layers.CheckJars(nil, nil, jars, "/jars")
		log.Printf("lock %s: Spark %s, Scala %s, Hadoop %s", in.LockPath, orUnknown(r.BaseSparkVersion), orUnknown(r.BaseScalaBinary), orUnknown(r.BaseHadoopVersion))
	}
	l.spark, l.scala, l.hadoop = r.BaseSparkVersion, r.BaseScalaBinary, r.BaseHadoopVersion
	return l, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// newerVersions are the versions of vs newer than current (Ivy's
// latest-revision order, oldest first): no SNAPSHOT, the same Scala
// suffix as current's (none when it has none) and, within, the same Spark
// line (org.apache.spark: the same major.minor; a version that names
// spark3.5: the same).
func newerVersions(group, artifact, current string, vs []string, l lines) []string {
	tag := func(v string) string {
		if m := scalaTagRe.FindStringSubmatch(v); m != nil {
			return m[1]
		}
		return ""
	}
	line := func(v string) string {
		if group == "org.apache.spark" {
			return revision.MajorMinor(v)
		}
		if m := sparkLineRe.FindStringSubmatch(v); m != nil {
			return m[1]
		}
		return ""
	}
	wantLine, wantTag := line(current), tag(current)
	if l.within && l.spark != "" && wantLine != "" {
		if strings.Contains(l.spark, ".") {
			wantLine = revision.MajorMinor(l.spark)
		}
	}
	if l.within && l.scala != "" && wantTag != "" {
		wantTag = l.scala
	}
	module := group + ":" + artifact
	held := func(v string) bool {
		switch {
		case !l.within:
			return false
		case layers.IsHadoopModule(module):
			// Its classes link against the base's exact Hadoop release.
			return l.hadoop == "" || v != l.hadoop
		case awsBundles[module]:
			return true
		case group == "org.apache.spark" && l.capSpark && revision.Compare(v, l.spark) > 0:
			return true
		}
		return line(v) != wantLine
	}
	out := []string{}
	cur := revision.Parse(current)
	seen := make(map[string]bool, len(vs)) // a listing may hold 100,000 versions (security review 4, L1)
	for _, v := range vs {
		switch {
		case seen[v],
			strings.HasSuffix(v, "-SNAPSHOT") || v == "SNAPSHOT",
			revision.CompareKeys(revision.Parse(v), cur) <= 0,
			tag(v) != wantTag,
			held(v):
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	revision.Sort(out)
	return out
}
