package layers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

func TestParseStrict(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		kind errdefs.Kind
	}{
		{"", nil, errdefs.Unknown},
		{"false", nil, errdefs.Unknown},
		{"true", StrictDefault, errdefs.Unknown},
		{"all", StrictDefault, errdefs.Unknown},
		{"scala-binary,hadoop-version", []string{WarnScalaBinary, WarnHadoopVersion}, errdefs.Unknown},
		{" hadoop-version , scala-binary,scala-binary", []string{WarnScalaBinary, WarnHadoopVersion}, errdefs.Unknown},
		{"all,spark-patch", StrictKinds, errdefs.Unknown},
		{"spark-patch", []string{WarnSparkPatch}, errdefs.Unknown},
		{"spark-line", nil, errdefs.BadArgument},
		{"scala-binary,", nil, errdefs.BadArgument},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseStrict(c.in)
			if diff := cmp.Diff(c.kind, errdefs.KindOf(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s\n%v", diff, err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStrictByKind: a patch of the base's Spark line is spark-patch, which
// a bare strict reports but does not fail on; another line is
// spark-version; a strictness of some kinds fails on those only.
func TestStrictByKind(t *testing.T) {
	base := []string{"/opt/spark/jars/spark-core_2.12-3.5.9.jar", "/opt/spark/jars/scala-library-2.12.18.jar",
		"/opt/spark/jars/hadoop-client-api-3.3.4.jar"}
	cases := []struct {
		name   string
		coords []string
		strict string
		kinds  []string // of the report
		fatal  []string // kinds the strict check fails on
	}{
		{"patch of the line", []string{"org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"}, "true",
			[]string{WarnSparkPatch}, nil},
		{"patch, named", []string{"org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"}, "spark-patch",
			[]string{WarnSparkPatch}, []string{WarnSparkPatch}},
		{"other line", []string{"org.apache.spark:spark-sql-kafka-0-10_2.12:3.4.1"}, "true",
			[]string{WarnSparkVersion}, []string{WarnSparkVersion}},
		{"same version", []string{"org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.9"}, "true", nil, nil},
		{"scala only", []string{"org.apache.spark:spark-sql-kafka-0-10_2.13:3.4.1", "org.apache.hadoop:hadoop-aws:3.5.0"}, "scala-binary",
			[]string{WarnScalaBinary, WarnSparkVersion, WarnHadoopVersion}, []string{WarnScalaBinary}},
		{"hadoop only", []string{"org.apache.spark:spark-sql-kafka-0-10_2.13:3.4.1", "org.apache.hadoop:hadoop-aws:3.5.0"}, "hadoop-version",
			[]string{WarnScalaBinary, WarnSparkVersion, WarnHadoopVersion}, []string{WarnHadoopVersion}},
		{"all", []string{"org.apache.spark:spark-sql-kafka-0-10_2.13:3.4.1", "org.apache.hadoop:hadoop-aws:3.5.0"}, "all",
			[]string{WarnScalaBinary, WarnSparkVersion, WarnHadoopVersion}, []string{WarnScalaBinary, WarnSparkVersion, WarnHadoopVersion}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := make([]string, len(c.coords))
			r := CheckJars(c.coords, files, base, SparkJarsDir)
			kinds := func(ws []Warning) []string {
				var out []string
				for _, w := range ws {
					out = append(out, w.Kind)
				}
				return out
			}
			if diff := cmp.Diff(c.kinds, kinds(r.Warnings)); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			sk, err := ParseStrict(c.strict)
			if err != nil {
				t.Fatal(err)
			}
			fatal := StrictWarnings(r.Warnings, sk)
			if diff := cmp.Diff(c.fatal, kinds(fatal)); diff != "" {
				t.Errorf("fatal (-want +got):\n%s", diff)
			}
			if err := StrictError("base", fatal, "nothing was pushed"); (err != nil) != (len(c.fatal) > 0) {
				t.Errorf("StrictError: %v", err)
			}
		})
	}
}

// TestReclassify: a verdict stored before spark-patch existed reads as a
// fresh report would.
func TestReclassify(t *testing.T) {
	ws := []Warning{
		{Kind: WarnSparkVersion, Coord: "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"},
		{Kind: WarnSparkVersion, Coord: "org.apache.spark:spark-avro_2.12:3.4.1"},
		{Kind: WarnScalaBinary, Coord: "org.apache.spark:spark-avro_2.13:3.5.7"},
	}
	got := reclassify(ws, "3.5.9")
	want := []string{WarnSparkPatch, WarnSparkVersion, WarnScalaBinary}
	var kinds []string
	for _, w := range got {
		kinds = append(kinds, w.Kind)
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if ws[0].Kind != WarnSparkVersion {
		t.Error("reclassify changed its input")
	}
}
