package outdated

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewerVersions(t *testing.T) {
	tests := []struct {
		name, group, current string
		vs                   []string
		within               bool
		want                 []string
	}{
		{"newer only, sorted, no SNAPSHOT", "org.x", "1.1", []string{"2.0", "1.0", "1.1", "1.10", "1.2", "3.0-SNAPSHOT"}, false, []string{"1.2", "1.10", "2.0"}},
		{"up to date", "org.x", "2.0", []string{"1.0", "2.0"}, false, []string{}},
		{"same Scala suffix (spark-packages)", "graphframes", "0.8.3-spark3.5-s_2.12",
			[]string{"0.8.3-spark3.5-s_2.13", "0.8.4-spark3.5-s_2.12", "0.8.4-spark3.5-s_2.13", "0.8.4-spark4.0-s_2.13", "0.8.5-spark4.0-s_2.12"}, false,
			[]string{"0.8.4-spark3.5-s_2.12", "0.8.5-spark4.0-s_2.12"}},
		{"within the Spark line (spark-packages)", "graphframes", "0.8.3-spark3.5-s_2.12",
			[]string{"0.8.4-spark3.5-s_2.12", "0.8.5-spark4.0-s_2.12"}, true, []string{"0.8.4-spark3.5-s_2.12"}},
		{"no suffix: none with one", "org.x", "1.0", []string{"1.1_2.12", "1.1"}, false, []string{"1.1"}},
		{"org.apache.spark within its line", "org.apache.spark", "3.5.1", []string{"3.5.0", "3.5.2", "3.5.7", "4.0.0", "4.1.0"}, true, []string{"3.5.2", "3.5.7"}},
		{"org.apache.spark across lines", "org.apache.spark", "3.5.1", []string{"3.5.2", "4.0.0"}, false, []string{"3.5.2", "4.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, newerVersions(tt.group, "a", tt.current, tt.vs, lines{within: tt.within})); diff != "" {
				t.Errorf("newerVersions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewerVersionsLines: --within-spark-line keeps a Hadoop connector on
// the lock's (or base's) Hadoop release, the AWS SDK bundle where
// hadoop-aws pins it, Spark modules on the base's line and no further than
// its release, and Scala-suffixed versions on its Scala.
func TestNewerVersionsLines(t *testing.T) {
	hadoop := []string{"3.3.4", "3.3.6", "3.4.1", "3.5.0"}
	spark := []string{"3.5.1", "3.5.3", "3.5.7", "4.0.0"}
	tests := []struct {
		name, module, current string
		vs                    []string
		lines                 lines
		want                  []string
	}{
		{"hadoop-aws, lock on 3.3.4", "org.apache.hadoop:hadoop-aws", "3.3.4", hadoop, lines{within: true, hadoop: "3.3.4"}, []string{}},
		{"hadoop-aws, base on 3.3.6", "org.apache.hadoop:hadoop-aws", "3.3.4", hadoop, lines{within: true, hadoop: "3.3.6"}, []string{"3.3.6"}},
		{"hadoop-aws, Hadoop unknown: held", "org.apache.hadoop:hadoop-aws", "3.3.4", hadoop, lines{within: true}, []string{}},
		{"hadoop-aws, not within", "org.apache.hadoop:hadoop-aws", "3.3.4", hadoop, lines{hadoop: "3.3.4"}, []string{"3.3.6", "3.4.1", "3.5.0"}},
		{"hadoop-azure too", "org.apache.hadoop:hadoop-azure", "3.3.4", hadoop, lines{within: true, hadoop: "3.3.4"}, []string{}},
		{"AWS SDK v1 bundle follows hadoop-aws", "com.amazonaws:aws-java-sdk-bundle", "1.12.262", []string{"1.12.262", "1.12.780"}, lines{within: true, hadoop: "3.3.4"}, []string{}},
		{"AWS SDK v2 bundle follows hadoop-aws", "software.amazon.awssdk:bundle", "2.24.6", []string{"2.24.6", "2.35.4"}, lines{within: true}, []string{}},
		{"spark module, base 3.5.3: capped", "org.apache.spark:spark-sql-kafka-0-10_2.12", "3.5.1", spark, lines{within: true, spark: "3.5.3", capSpark: true}, []string{"3.5.3"}},
		{"spark module, lock's line", "org.apache.spark:spark-sql-kafka-0-10_2.12", "3.5.1", spark, lines{within: true, spark: "3.5.1"}, []string{"3.5.3", "3.5.7"}},
		{"spark module on 3.4, base 3.5: moved to the base's line", "org.apache.spark:spark-avro_2.12", "3.4.1", []string{"3.4.4", "3.5.1", "3.5.3", "4.0.0"}, lines{within: true, spark: "3.5.3", capSpark: true}, []string{"3.5.1", "3.5.3"}},
		{"spark-packages, base's line and Scala", "graphframes:graphframes", "0.8.3-spark3.4-s_2.12",
			[]string{"0.8.4-spark3.5-s_2.12", "0.8.4-spark3.5-s_2.13", "0.8.4-spark3.4-s_2.12", "0.8.5-spark4.0-s_2.13"},
			lines{within: true, spark: "3.5.3", scala: "2.13"}, []string{"0.8.4-spark3.5-s_2.13"}},
		{"no line: any newer", "io.delta:delta-spark_2.12", "3.2.0", []string{"3.2.1", "3.3.0"}, lines{within: true, spark: "3.5.3", scala: "2.12", hadoop: "3.3.4"}, []string{"3.2.1", "3.3.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, a, _ := strings.Cut(tt.module, ":")
			if diff := cmp.Diff(tt.want, newerVersions(g, a, tt.current, tt.vs, tt.lines)); diff != "" {
				t.Errorf("newerVersions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewerVersionsHostileListing: a maven-metadata.xml of 120,000
// versions, all newer (security review 4, L1: 20 s, 480,000 in 268 s),
// is filtered in about linear time: duplicates are found by a set. Under
// the race detector (no time bound: it slows map and regexp work
// manyfold, 120,000 took 110 s) a tenth of them.
func TestNewerVersionsHostileListing(t *testing.T) {
	n := 120_000
	if raceEnabled {
		n = 12_000
	}
	vs := make([]string, 0, n+1000)
	for i := range n {
		vs = append(vs, fmt.Sprintf("%d.%02d-rc%d.x", 1+i/10000, i%100, i))
	}
	vs = append(vs, vs[:1000]...) // listed twice
	start := time.Now()
	got := newerVersions("od", "lib", "0.1", vs, lines{})
	took := time.Since(start)
	if len(got) != n {
		t.Errorf("%d newer versions, want %d", len(got), n)
	}
	t.Logf("%d versions: %s", n, took)
	if took > 10*time.Second && !raceEnabled {
		t.Errorf("%d versions took %s", n, took)
	}
}
