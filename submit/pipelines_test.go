package submit

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// TestParsePipelinesArgv: a spark-pipelines command line is split as
// SparkPipelines.splitArgs splits it: spark-submit's options anywhere are
// spark-submit's (--packages, --conf spark.jars.packages,
// --properties-file), --name/-h/--help and everything else are the pipeline
// CLI's, in place; Tokens gives the line back unchanged.
func TestParsePipelinesArgv(t *testing.T) {
	args := []string{"/opt/spark/bin/spark-pipelines", "run", "--spec", "pipeline.yml", "--packages", "org.postgresql:postgresql:42.7.1",
		"--conf", "spark.jars.packages=io.delta:delta-spark_2.13:4.0.0", "--name", "nightly", "--full-refresh", "orders",
		"--properties-file", "app.conf", "--verbose", "--master=local[2]"}
	a, err := ParseArgv(args)
	if err != nil {
		t.Fatal(err)
	}
	if !a.IsPipelines() || !a.IsPython() || !a.Mixed() || a.Action != ActionSubmit {
		t.Errorf("pipelines %v python %v mixed %v action %s", a.IsPipelines(), a.IsPython(), a.Mixed(), a.Action)
	}
	var names []string
	for _, o := range a.Options {
		names = append(names, o.Name)
	}
	if diff := cmp.Diff([]string{ResourceSparkPipelines, "--packages", "--conf", "--properties-file", "--verbose", "--master"}, names); diff != "" {
		t.Errorf("spark-submit options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"run", "--spec", "pipeline.yml", "--name", "nightly", "--full-refresh", "orders"}, a.AppArgs); diff != "" {
		t.Errorf("pipeline arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(args, a.Tokens()); diff != "" {
		t.Errorf("Tokens (-want +got):\n%s", diff)
	}
	if v, _ := a.Flag("--packages"); v != "org.postgresql:postgresql:42.7.1" {
		t.Errorf("--packages %q", v)
	}
	prog, rest, ok := SplitProgram(a.Tokens())
	if !ok || prog != args[0] || len(rest) != len(args)-1 {
		t.Errorf("SplitProgram: %q %v %v", prog, rest, ok)
	}
	if got := PipelinesBin("spark-pipelines", "/opt/spark/bin/spark-submit"); got != "/opt/spark/bin/spark-pipelines" {
		t.Errorf("PipelinesBin next to spark-submit: %q", got)
	}
	if got := PipelinesBin("/x/bin/spark-pipelines", "/opt/spark/bin/spark-submit"); got != "/x/bin/spark-pipelines" {
		t.Errorf("PipelinesBin of a path: %q", got)
	}
	// A plain spark-submit line is unchanged.
	if _, _, ok := SplitProgram([]string{"--master", "local", "app.py"}); ok {
		t.Error("SplitProgram took a spark-submit line")
	}
}

// TestParsePipelinesRefusals: what spark-pipelines itself refuses is a
// usage error naming the argument.
func TestParsePipelinesRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"spark-pipelines", "run", "--class", "com.x.Main"},
		{"spark-pipelines", "run", "--conf", "spark.api.mode=classic"},
		{"spark-pipelines", "run", "--packages"},
		{"spark-pipelines", "run", "--conf", "novalue"},
	} {
		_, err := ParseArgv(args)
		if errdefs.KindOf(err) != errdefs.BadArgument {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if _, err := ParseArgv([]string{"spark-pipelines", "run", "--conf", "spark.api.mode=connect"}); err != nil {
		t.Errorf("spark.api.mode=connect: %v", err)
	}
}
