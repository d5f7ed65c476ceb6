package upgrade

import (
	"context"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

// TestPlanCentralIT moves a real 3.5 job (spark-avro, hadoop-aws) to the
// newest 4.0.x on Maven Central (PREBAKE_IT=1; network only, no JVM).
func TestPlanCentralIT(t *testing.T) {
	testenv.RequireIT(t)
	// The machine's Central (Maven's settings), no host written here.
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		t.Fatal(err)
	}
	req := resolver.Request{
		Packages:              []string{"org.apache.spark:spark-avro_2.12:3.5.1,org.apache.hadoop:hadoop-aws:3.3.4"},
		Repositories:          []string{central},
		NoDefaultRepositories: true,
		CacheDir:              t.TempDir(),
	}
	r, err := Plan(context.Background(), Input{Request: req, To: "4.0"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.To.Spark, "4.0.") || r.To.Scala != "2.13" || r.From.Ivy != "2.5.1" {
		t.Errorf("lines: %+v → %+v", r.From, r.To)
	}
	want := map[string]string{
		"org.apache.spark:spark-avro_2.12:3.5.1": "org.apache.spark:spark-avro_2.13:" + r.To.Spark,
		"org.apache.hadoop:hadoop-aws:3.3.4":     "org.apache.hadoop:hadoop-aws:3.3.4",
	}
	for _, c := range r.Coordinates {
		if want[c.From] != c.To {
			t.Errorf("%s → %s, want %s", c.From, c.To, want[c.From])
		}
	}
	if err := r.Breaks(); err != nil {
		t.Errorf("Breaks() = %v", err)
	}
	seen := false
	for _, j := range r.Jars {
		if j.Module == "com.amazonaws:aws-java-sdk-bundle" {
			t.Errorf("aws-java-sdk-bundle changed: %+v", j)
		}
		if j.Module == "org.apache.spark:spark-avro_2.13" && j.Change == "added" && len(j.Why) == 1 {
			seen = true
		}
	}
	if !seen {
		t.Errorf("spark-avro_2.13 not added with its why path: %+v", r.Jars)
	}
	var b strings.Builder
	_ = WriteText(&b, r)
	t.Logf("\n%s", b.String())
}
