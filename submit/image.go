package submit

import "regexp"

// officialTag is the tag of Apache Spark's images (apache/spark, spark):
// the Spark version first ("3.5.9", "4.0.5-scala2.13-java17-python3-ubuntu").
var officialTag = regexp.MustCompile(`(^|/)(apache/)?spark:([0-9]+\.[0-9]+\.[0-9]+)(-[a-z0-9.-]+)?$`)

// ImageSparkVersion is the Spark version an Apache Spark image's tag names
// (apache/spark:4.0.5-scala2.13-java17-ubuntu → 4.0.5), or "" for any other
// image.
func ImageSparkVersion(image string) string {
	if m := officialTag.FindStringSubmatch(image); m != nil {
		return m[3]
	}
	return ""
}
