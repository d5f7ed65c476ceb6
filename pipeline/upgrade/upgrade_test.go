package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/resolver"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// job35 is a Spark 3.5 job over testdata/upgrade-repo (gen.sh): Spark's
// Avro, a Scala library with a 2.13 build at its version, one whose 2.13
// builds stop before it, one with none, and hadoop-aws.
var job35 = []string{"org.apache.spark:spark-avro_2.12:3.5.1,com.example:lib-good_2.12:1.0,com.example:lib-old_2.12:2.1,com.example:lib-none_2.12:1.0,org.apache.hadoop:hadoop-aws:3.3.4"}

func repoReq(t *testing.T, packages ...string) (resolver.Request, string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "upgrade-repo"))
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + root + "/"
	return resolver.Request{Packages: packages, Repositories: []string{url}, NoDefaultRepositories: true,
		CacheDir: t.TempDir(), ChecksumPolicy: resolver.ChecksumStrict}, url
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got, -update rewrites):\n%s", name, d)
	}
}

func TestPlanGoldens(t *testing.T) {
	for _, tc := range []struct{ name, to string }{{"avro-3.5-to-4.0", "4.0"}, {"avro-3.5-to-4.0.0", "4.0.0"}} {
		t.Run(tc.name, func(t *testing.T) {
			req, url := repoReq(t, job35...)
			r, err := Plan(context.Background(), Input{Request: req, To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			var text, js bytes.Buffer
			if err := WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(r, "", "  ")
			js.Write(append(b, '\n'))
			golden(t, tc.name+".txt.golden", strings.ReplaceAll(text.String(), url, "$REPO/"))
			golden(t, tc.name+".json.golden", strings.ReplaceAll(js.String(), url, "$REPO/"))
		})
	}
}

func TestPlanCoordinates(t *testing.T) {
	req, _ := repoReq(t, job35...)
	r, err := Plan(context.Background(), Input{Request: req, To: "4.0"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Coordinate{
		{From: "org.apache.spark:spark-avro_2.12:3.5.1", To: "org.apache.spark:spark-avro_2.13:4.0.1", Change: SparkModule},
		{From: "com.example:lib-good_2.12:1.0", To: "com.example:lib-good_2.13:1.0", Change: ScalaSuffix},
		{From: "com.example:lib-old_2.12:2.1", To: "com.example:lib-old_2.13:1.8", Change: NoTargetBuild, Newest: "1.8"},
		{From: "com.example:lib-none_2.12:1.0", Change: NoTargetBuild},
		{From: "org.apache.hadoop:hadoop-aws:3.3.4", To: "org.apache.hadoop:hadoop-aws:3.3.4", Change: Unchanged},
	}
	if d := cmp.Diff(want, r.Coordinates); d != "" {
		t.Errorf("coordinates (-want +got):\n%s", d)
	}
	if r.From.Ivy != "2.5.1" || r.To.Ivy != "2.5.2+" || r.To.Spark != "4.0.1" || r.To.Scala != "2.13" {
		t.Errorf("lines: %+v → %+v", r.From, r.To)
	}
	if err := r.Breaks(); !errors.Is(err, errdefs.NotFound) {
		t.Errorf("Breaks() = %v, want errdefs.NotFound", err)
	}
}

func TestPlanNothingBreaks(t *testing.T) {
	req, _ := repoReq(t, "org.apache.spark:spark-avro_2.12:3.5.1,org.apache.hadoop:hadoop-aws:3.3.4")
	r, err := Plan(context.Background(), Input{Request: req, To: "4.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Breaks(); err != nil {
		t.Errorf("Breaks() = %v, want nil", err)
	}
	var xz *JarChange
	for i := range r.Jars {
		if r.Jars[i].Module == "org.tukaani:xz" {
			xz = &r.Jars[i]
		}
	}
	want := &JarChange{Module: "org.tukaani:xz", Change: "upgrade", From: "1.9", To: "1.10",
		Why: [][]string{{"org.apache.spark:spark-avro_2.13:4.0.0", "org.tukaani:xz:1.10"}}}
	if d := cmp.Diff(want, xz); d != "" {
		t.Errorf("xz (-want +got):\n%s", d)
	}
}

func TestPlanBaseMismatch(t *testing.T) {
	req, _ := repoReq(t, "org.apache.spark:spark-avro_2.12:3.5.1")
	base, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "base-image"))
	r, err := Plan(context.Background(), Input{Request: req, To: "4.0.0", Base: "oci:" + base + ":3.5.0"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Base == nil || r.Base.Report.BaseSparkVersion != "3.5.0" {
		t.Fatalf("base check: %+v", r.Base)
	}
	if err := r.Breaks(); !errors.Is(err, errdefs.Invalid) {
		t.Errorf("Breaks() = %v, want errdefs.Invalid (the base is 3.5, Scala 2.12)", err)
	}
}

func TestPlanKubernetes(t *testing.T) {
	req, _ := repoReq(t)
	argv := []string{"--master", "k8s://https://k8s.example:6443", "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.container.image=apache/spark:4.3.0",
		"--packages", "org.apache.hadoop:hadoop-aws:3.3.4", "--class", "com.example.Main", "local:///opt/app.jar"}
	r, err := Plan(context.Background(), Input{Request: req, Argv: argv, Environ: []string{"USER=spark"}, From: "3.5.1", To: "4.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kubernetes == nil || r.Kubernetes.Skipped != "" {
		t.Fatalf("kubernetes: %+v", r.Kubernetes)
	}
	want := map[string]FieldChange{
		"spec.containers[0].securityContext.allowPrivilegeEscalation": {To: "false"},
		"metadata.labels.spark-version":                               {From: "3.5.1", To: "4.3.0"},
	}
	for _, c := range r.Kubernetes.Changes {
		if w, ok := want[c.Path]; ok && strings.HasPrefix(c.Object, "pod/") {
			if w.From != c.From || w.To != c.To {
				t.Errorf("%s: %q → %q, want %q → %q", c.Path, c.From, c.To, w.From, w.To)
			}
			delete(want, c.Path)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing pod changes: %v", want)
	}
	// the same line: nothing differs
	r, err = Plan(context.Background(), Input{Request: req, Argv: argv, Environ: []string{"USER=spark"}, From: "4.3.0", To: "4.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kubernetes.Changes) != 0 {
		t.Errorf("4.3.0 → 4.3.0: %v", r.Kubernetes.Changes)
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		packages []string
		from, to string
		want     errdefs.Kind
	}{
		{"no target", job35, "", "", errdefs.BadArgument},
		{"bad target", job35, "", "four", errdefs.BadArgument},
		{"3.5 line without patch", []string{"org.apache.hadoop:hadoop-aws:3.3.4"}, "3.4.1", "3.5", errdefs.BadArgument},
		{"unknown current line", []string{"org.apache.hadoop:hadoop-aws:3.3.4"}, "", "4.0", errdefs.BadArgument},
		{"no coordinate", nil, "3.5.1", "4.0", errdefs.BadArgument},
		{"absent", []string{"org.apache.spark:spark-absent_2.12:3.5.1"}, "", "4.0.0", errdefs.NotFound},
		{"line with no release", job35, "", "4.2", errdefs.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := repoReq(t, tc.packages...)
			_, err := Plan(context.Background(), Input{Request: req, From: tc.from, To: tc.to})
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if tc.name == "line with no release" {
				_, url := repoReq(t)
				for _, w := range []string{"no release of Spark line 4.2", url} {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to say %q", err, w)
					}
				}
			}
		})
	}
}
