package rewrite

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/submit"
)

// TestRewritePipelines: `rewrite` takes a spark-pipelines command line as
// it takes spark-submit's: --packages and --conf spark.jars.packages go,
// the resolved jars come in (before the pipeline CLI's arguments, after the
// program), and every other token keeps its place.
func TestRewritePipelines(t *testing.T) {
	args := []string{"spark-pipelines", "run", "--spec", "pipeline.yml", "--packages", "org.postgresql:postgresql:42.7.1",
		"--name", "nightly", "--conf", "spark.sql.shuffle.partitions=4"}
	var environ []string
	r, err := applyArgsIn(context.Background(), environ, args, WithJarSource(fakeRewriteJars("")), WithWorkDir(t.TempDir()))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	jar := "/cache/retrieve/0123abcd/org.postgresql_postgresql-42.7.1.jar"
	want := []string{"spark-pipelines", "--jars", jar, "--py-files", jar, "run", "--spec", "pipeline.yml",
		"--name", "nightly", "--conf", "spark.sql.shuffle.partitions=4"}
	if diff := cmp.Diff(want, r.Args); diff != "" {
		t.Errorf("Apply(%q) (-want +got):\n%s", args, diff)
	}
	if r.Primary != submit.ResourceSparkPipelines {
		t.Errorf("primary %q", r.Primary)
	}
	checkRewriteResult(t, args, r, environ)
}
