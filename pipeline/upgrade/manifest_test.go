package upgrade

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
)

// TestReadSparkApplication reads a job's inputs from a SparkApplication:
// deps beat sparkConf (as the operator's --packages beats --conf), a
// ScheduledSparkApplication's template, the version from the image's tag
// when spec.sparkVersion is absent; a file with no or several
// applications is refused naming it.
func TestReadSparkApplication(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "spark-application.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const conf = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: nightly}
spec:
  schedule: "@daily"
  template:
    type: Python
    image: registry.example/spark:3.5.1-scala2.12-java17-python3-ubuntu
    sparkConf:
      spark.jars.packages: org.apache.spark:spark-avro_2.12:3.5.1
      spark.jars.repositories: https://repo.example/maven2/
      spark.jars.excludes: org.slf4j:slf4j-api
`
	two := string(example) + "---\n" + strings.Replace(string(example), "events-daily", "events-hourly", 1)
	for _, tc := range []struct {
		name, yaml string
		want       *ManifestJob
		version    string
		err        string
	}{
		{name: "example", yaml: string(example), version: "3.5.0", want: &ManifestJob{Name: "events-daily", SparkVersion: "3.5.0", Image: "apache/spark:3.5.0",
			Packages: submit.Packages{Packages: "ch.qos.logback:logback-classic:1.4.11,org.slf4j:slf4j-api:1.7.36", Ivy: "/tmp/.ivy2"}}},
		{name: "scheduled, sparkConf, version from the image", yaml: conf, version: "3.5.1", want: &ManifestJob{Name: "nightly", Image: "registry.example/spark:3.5.1-scala2.12-java17-python3-ubuntu",
			Packages: submit.Packages{Packages: "org.apache.spark:spark-avro_2.12:3.5.1", Repositories: "https://repo.example/maven2/", Excludes: "org.slf4j:slf4j-api"}}},
		{name: "none", yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", err: "no SparkApplication"},
		{name: "two", yaml: two, err: "2 SparkApplications (events-daily, events-hourly)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadSparkApplication(context.Background(), "app.yaml", []byte(tc.yaml))
			if tc.err != "" {
				if !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "app.yaml") {
					t.Fatalf("err = %v, want an Invalid error naming app.yaml with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("job (-want +got):\n%s", d)
			}
			if v := got.sparkVersionOf(); v != tc.version {
				t.Errorf("version %q, want %q", v, tc.version)
			}
		})
	}
}

// TestPlanManifest plans the upgrade of a SparkApplication's job: its
// packages, and its Spark version from spec.sparkVersion.
func TestPlanManifest(t *testing.T) {
	req, url := repoReq(t)
	yaml := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: j}\nspec:\n  image: apache/spark:3.5.1\n" +
		"  deps:\n    packages: [org.apache.spark:spark-avro_2.12:3.5.1, org.apache.hadoop:hadoop-aws:3.3.4]\n    repositories: [" + url + "]\n"
	m, err := ReadSparkApplication(context.Background(), "j.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Plan(context.Background(), Input{Request: req, Manifest: m, To: "4.0"})
	if err != nil {
		t.Fatal(err)
	}
	if r.From.Spark != "3.5.1" || r.From.Image != "apache/spark:3.5.1" || !strings.HasPrefix(r.To.Spark, "4.0.") || len(r.Coordinates) != 2 {
		t.Errorf("report: from %+v to %+v, %d coordinates", r.From, r.To, len(r.Coordinates))
	}
}
