package upgrade

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

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
