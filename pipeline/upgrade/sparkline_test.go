package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/resolver"
)

// TestPlanSparkLineArtifact: an artifact built per Spark line, whose name
// carries the line (Iceberg's iceberg-spark-runtime-3.5_2.12), moves to the
// target line's artifact, not only to the target's Scala build of the old
// line's (which resolves, and fails at run time): at its version when the
// target line has it, else to the newest the target line's has, and left
// out when the target line has none.
func TestPlanSparkLineArtifact(t *testing.T) {
	pom := func(a, v string) string {
		return "<project><modelVersion>4.0.0</modelVersion><groupId>org.example</groupId><artifactId>" + a +
			"</artifactId><version>" + v + "</version></project>"
	}
	meta := func(a string, vs ...string) string {
		s := "<metadata><groupId>org.example</groupId><artifactId>" + a + "</artifactId><versioning><versions>"
		for _, v := range vs {
			s += "<version>" + v + "</version>"
		}
		return s + "</versions></versioning></metadata>"
	}
	files := map[string]string{}
	for _, av := range [][2]string{{"rt-3.5_2.12", "1.2"}, {"rt-3.5_2.13", "1.2"}, {"rt-4.0_2.13", "1.2"}, {"rt-4.1_2.13", "1.1"}, {"other-3.5", "2"}} {
		d := "repo/org/example/" + av[0] + "/" + av[1] + "/" + av[0] + "-" + av[1]
		files[d+".pom"], files[d+".jar"] = pom(av[0], av[1]), av[0]
	}
	files["repo/org/example/rt-3.5_2.13/maven-metadata.xml"] = meta("rt-3.5_2.13", "1.2")
	files["repo/org/example/rt-4.0_2.13/maven-metadata.xml"] = meta("rt-4.0_2.13", "1.2")
	files["repo/org/example/rt-4.1_2.13/maven-metadata.xml"] = meta("rt-4.1_2.13", "1.0", "1.1")
	dir := m2test.WriteFiles(t, files)
	for _, tc := range []struct {
		to   string
		want []Coordinate
	}{
		{"4.0.0", []Coordinate{
			{From: "org.example:rt-3.5_2.12:1.2", To: "org.example:rt-4.0_2.13:1.2", Change: SparkLineArtifact},
			{From: "org.example:other-3.5:2", Change: NoTargetBuild}}},
		{"4.1.0", []Coordinate{
			{From: "org.example:rt-3.5_2.12:1.2", To: "org.example:rt-4.1_2.13:1.1", Change: NoTargetBuild, Newest: "1.1"},
			{From: "org.example:other-3.5:2", Change: NoTargetBuild}}},
		{"3.5.9", []Coordinate{
			{From: "org.example:rt-3.5_2.12:1.2", To: "org.example:rt-3.5_2.12:1.2", Change: Unchanged},
			{From: "org.example:other-3.5:2", To: "org.example:other-3.5:2", Change: Unchanged}}},
	} {
		t.Run(tc.to, func(t *testing.T) {
			req := resolver.Request{Packages: []string{"org.example:rt-3.5_2.12:1.2,org.example:other-3.5:2"},
				Repositories: []string{"file://" + dir + "/repo/"}, NoDefaultRepositories: true, CacheDir: t.TempDir()}
			r, err := Plan(context.Background(), Input{Request: req, From: "3.5.1", To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, r.Coordinates); d != "" {
				t.Errorf("coordinates (-want +got):\n%s", d)
			}
			if r.ToLock == nil || len(r.ToLock.Artifacts) != r.To.Jars {
				t.Errorf("ToLock %v: want the target set of %d jars", r.ToLock, r.To.Jars)
			}
		})
	}
}

// TestPlanTargetUnresolved: a target set that does not resolve (a module
// the target build names is missing), or that is empty (every coordinate
// left out), is a report with the problem and no target lock, as
// spark-submit's "unresolved dependency" is its answer; Breaks is NotFound.
func TestPlanTargetUnresolved(t *testing.T) {
	dep := "<dependencies><dependency><groupId>org.example</groupId><artifactId>missing</artifactId><version>1</version></dependency></dependencies>"
	files := map[string]string{
		"repo/org/example/dg-3.5_2.12/1/dg-3.5_2.12-1.pom": "<project><modelVersion>4.0.0</modelVersion><groupId>org.example</groupId><artifactId>dg-3.5_2.12</artifactId><version>1</version></project>",
		"repo/org/example/dg-3.5_2.12/1/dg-3.5_2.12-1.jar": "x",
		"repo/org/example/dg-4.0_2.13/1/dg-4.0_2.13-1.pom": "<project><modelVersion>4.0.0</modelVersion><groupId>org.example</groupId><artifactId>dg-4.0_2.13</artifactId><version>1</version>" + dep + "</project>",
		"repo/org/example/dg-4.0_2.13/1/dg-4.0_2.13-1.jar": "x",
		"repo/org/example/dg-4.0_2.13/maven-metadata.xml":  "<metadata><versioning><versions><version>1</version></versions></versioning></metadata>",
	}
	dir := m2test.WriteFiles(t, files)
	for _, tc := range []struct{ name, to, kind, packages string }{
		{"unresolved", "4.0.0", ProblemTargetUnresolved, "org.example:dg-4.0_2.13:1"},
		{"all left out", "4.1.0", ProblemNoTargetBuild, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := resolver.Request{Packages: []string{"org.example:dg-3.5_2.12:1"}, Repositories: []string{"file://" + dir + "/repo/"},
				NoDefaultRepositories: true, CacheDir: t.TempDir()}
			r, err := Plan(context.Background(), Input{Request: req, From: "3.5.1", To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if r.ToLock != nil || r.To.Jars != 0 || r.To.Packages != tc.packages || len(r.Jars) != 0 {
				t.Errorf("target %+v, lock %v, %d jar changes: want no target set", r.To, r.ToLock, len(r.Jars))
			}
			if len(r.Problems) == 0 || r.Problems[len(r.Problems)-1].Kind != tc.kind {
				t.Errorf("problems %+v, want a %s", r.Problems, tc.kind)
			}
			if err := r.Breaks(); !errors.Is(err, errdefs.NotFound) {
				t.Errorf("Breaks() = %v, want NotFound", err)
			}
		})
	}
}

// TestPlanBuiltFor: a third-party build whose POM depends on another Spark
// line's modules (Delta's delta-spark_2.13:3.3.2 on Spark 3.5's, provided)
// has no build for the target at its version: the report names the line it
// is built for and moves to the newest version built for the target line.
func TestPlanBuiltFor(t *testing.T) {
	pom := func(a, v, spark string) string {
		return "<project><modelVersion>4.0.0</modelVersion><groupId>org.example</groupId><artifactId>" + a + "</artifactId><version>" + v +
			"</version><dependencies><dependency><groupId>org.apache.spark</groupId><artifactId>spark-sql" + a[len(a)-5:] +
			"</artifactId><version>" + spark + "</version><scope>provided</scope></dependency></dependencies></project>"
	}
	files := map[string]string{"repo/org/example/dl_2.13/maven-metadata.xml": "<metadata><versioning><versions><version>1</version><version>2</version><version>3</version></versions></versioning></metadata>"}
	for _, b := range [][3]string{{"dl_2.12", "1", "3.5.3"}, {"dl_2.13", "1", "3.5.3"}, {"dl_2.13", "2", "4.0.0"}, {"dl_2.13", "3", "4.1.0"}} {
		d := "repo/org/example/" + b[0] + "/" + b[1] + "/" + b[0] + "-" + b[1]
		files[d+".pom"], files[d+".jar"] = pom(b[0], b[1], b[2]), b[0]
	}
	dir := m2test.WriteFiles(t, files)
	req := resolver.Request{Packages: []string{"org.example:dl_2.12:1"}, Repositories: []string{"file://" + dir + "/repo/"},
		NoDefaultRepositories: true, CacheDir: t.TempDir()}
	r, err := Plan(context.Background(), Input{Request: req, From: "3.5.1", To: "4.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Coordinate{{From: "org.example:dl_2.12:1", To: "org.example:dl_2.13:2", Change: NoTargetBuild, Newest: "2", BuiltFor: "3.5"}}
	if d := cmp.Diff(want, r.Coordinates); d != "" {
		t.Errorf("coordinates (-want +got):\n%s", d)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Message, "org.example:dl_2.13:1 is built for Spark 3.5") {
		t.Errorf("problems %+v", r.Problems)
	}
	if r.To.Jars != 1 {
		t.Errorf("target %+v: want dl_2.13:2 resolved", r.To)
	}
}
