package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
)

// TestReplayGoldens replays every case of testdata/central/cases.txt
// hermetically: prebake's graph over the recorded mirror of what the
// resolution read from Central (file://, no network) must give the jar
// names that the real spark-submit retrieved (the golden). The bytes are
// compared live (make parity-central).
func TestReplayGoldens(t *testing.T) {
	root, testdata, cases := suite(t)
	lines := map[string]int{}
	for _, c := range cases {
		lines[c.spark]++
	}
	if len(cases) < 40 {
		t.Fatalf("the suite has %d cases (%v by Spark line), want at least 40", len(cases), lines)
	}
	for _, l := range testenv.SparkLines {
		if lines[l.Name] < 3 {
			t.Errorf("Spark line %s has %d cases, want at least 3 (%v)", l.Name, lines[l.Name], lines)
		}
	}
	mirror := t.TempDir()
	if err := unpackMirror(filepath.Join(testdata, mirrorArchive), mirror); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, c := range cases {
		t.Run(c.id(), func(t *testing.T) {
			want, err := readGolden(goldenPath(root, c))
			if err != nil {
				t.Fatalf("%v (record it: go run ./hack/central -record -lines %s -only %s)", err, c.spark, c.id())
			}
			got, err := replay(context.Background(), c, mirror, testdata, t.TempDir(), cache)
			if err != nil {
				t.Fatal(err)
			}
			if want.failed != got.failed {
				t.Fatalf("spark-submit failed: %v, prebake failed: %v (%s)", want.failed, got.failed, got.detail)
			}
			if diff := cmp.Diff(want.names(), got.names()); diff != "" {
				t.Errorf("jar names (-spark-submit +prebake):\n%s", diff)
			}
		})
	}
}

// suite returns the repository root, testdata/central and its cases.
func suite(tb testing.TB) (root, testdata string, cases []kase) {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	testdata = filepath.Join(root, "testdata", "central")
	cases, err = loadCases(filepath.Join(testdata, "cases.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	return root, testdata, cases
}

// TestNoHostWritten: the cases and goldens name Central only as ${CENTRAL}.
func TestNoHostWritten(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "central", "cases", "*.golden"))
	files = append(files, filepath.Join("..", "..", "testdata", "central", "cases.txt"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if i := strings.Index(l, "://"); i >= 0 && !strings.HasPrefix(l[i:], ":///") && !strings.Contains(l, "file://${TESTDATA}") {
				t.Errorf("%s: a URL is written down: %q", f, l)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	spark := outcome{jars: map[string]string{"a.jar": "1", "b.jar": "2"}}
	for _, tc := range []struct {
		name     string
		got      outcome
		withSums bool
		want     string
	}{
		{"equal", outcome{jars: map[string]string{"a.jar": "1", "b.jar": "2"}}, true, ""},
		{"bytes differ", outcome{jars: map[string]string{"a.jar": "1", "b.jar": "3"}}, true, "~ b.jar: sha256 3, want 2"},
		{"names only", outcome{jars: map[string]string{"a.jar": "", "b.jar": ""}}, false, ""},
		{"missing and extra", outcome{jars: map[string]string{"a.jar": "1", "c.jar": "4"}}, true, "- b.jar\n+ c.jar"},
		{"prebake fails", outcome{failed: true, detail: "boom"}, true, "prebake failed where Spark resolved: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, compare(spark, tc.got, tc.withSums)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestLoadCasesRejects(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"fields", "a|3.5|g:a:1|", "want 5 |-separated fields"},
		{"spark line", "a|3.3|g:a:1||", `spark "3.3"`},
		{"spark major", "a|5.x|g:a:1||", `spark "5.x"`},
		{"@ in name", "a@3.4|3.4|g:a:1||", "bad or duplicate case name"},
		{"path in name", "../a|3.5|g:a:1||", "bad or duplicate case name"},
		{"duplicate", "a|3.5|g:a:1||\na|4.0|g:a:1||", "bad or duplicate case name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cases.txt")
			if err := os.WriteFile(p, []byte(tc.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadCases(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRandomCasesSeeded(t *testing.T) {
	_, _, cases := suite(t)
	a, b := randomCases(cases, 5, 42), randomCases(cases, 5, 42)
	if diff := cmp.Diff(a, b, cmp.AllowUnexported(kase{})); diff != "" {
		t.Fatalf("the same seed drew other sets:\n%s", diff)
	}
	if len(a) != 5*len(testenv.SparkLines) {
		t.Fatalf("%d sets, want 5 per Spark line", len(a))
	}
	for _, c := range a {
		n := len(strings.Split(c.coords, ","))
		if n < 2 || n > 4 || strings.Contains(c.coords, "etl-udfs") {
			t.Errorf("%s: %d packages (%s), want 2–4 popular ones", c.name, n, c.coords)
		}
	}
}

// TestSelectLines: a case's selector names lines and majors, oldest first,
// and a case of several lines has one golden per line (name@line).
func TestSelectLines(t *testing.T) {
	for _, tc := range []struct{ sel, want string }{
		{"3.5", "3.5"},
		{"3.x", "3.4 3.5-early 3.5"},
		{"4.x", "4.0 4.1 4.2 4.3"},
		{"4.3,3.4", "3.4 4.3"},
		{"3.x,4.x", "3.4 3.5-early 3.5 4.0 4.1 4.2 4.3"},
	} {
		got, err := selectLines(tc.sel)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("selectLines(%q) = %v, %v; want %s", tc.sel, got, err, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "cases.txt")
	if err := os.WriteFile(p, []byte("one|3.5|g:a:1||\nmany|3.4,4.3|g:a:1||\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := loadCases(p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, filepath.Base(goldenPath("/r", c))+" "+c.sparkVersion())
	}
	if d := cmp.Diff([]string{"one.golden 3.5.9", "many@3.4.golden 3.4.4", "many@4.3.golden 4.3.0"}, ids); d != "" {
		t.Error(d)
	}
	ci, err := onLines(cs, "ci")
	if err != nil || len(ci) != 3 {
		t.Errorf("onLines ci: %d cases, %v; want 3", len(ci), err)
	}
	if early, _ := onLines(cs, "3.5-early"); len(early) != 0 {
		t.Errorf("onLines 3.5-early: %v, want none", early)
	}
}

// TestIvy1642Golden: the goldens the real spark-submit recorded for
// ivy1642-saxon differ by Ivy exactly as IVY-1642 says: the lines with Ivy
// 2.5.1 lack the plain xmlresolver jar beside its data jar, the others have
// both; and the replay (TestReplayGoldens) follows each line.
func TestIvy1642Golden(t *testing.T) {
	root, _, cases := suite(t)
	n := 0
	for _, c := range cases {
		if c.name != "ivy1642-saxon" {
			continue
		}
		n++
		g, err := readGolden(goldenPath(root, c))
		if err != nil {
			t.Fatal(err)
		}
		_, plain := g.jars["org.xmlresolver_xmlresolver-5.2.2.jar"]
		_, data := g.jars["org.xmlresolver_xmlresolver-5.2.2-data.jar"]
		old := sparkLines[c.spark].Ivy == resolver.Ivy251
		if !data || plain == old {
			t.Errorf("%s (Ivy %s): xmlresolver jar %v, data jar %v; want the plain one only with Ivy 2.5.2+", c.id(), sparkLines[c.spark].Ivy, plain, data)
		}
	}
	if n != len(testenv.SparkLines) {
		t.Errorf("ivy1642-saxon runs on %d lines, want every line (%d)", n, len(testenv.SparkLines))
	}
}

// TestSparkLines: each line's Ivy and Scala are what its pyspark's jars
// say (checked where it is installed), and resolver.IvyOf agrees with the
// table.
func TestSparkLines(t *testing.T) {
	for _, l := range testenv.SparkLines {
		t.Run(l.Name, func(t *testing.T) {
			ivy, err := resolver.IvyOf(l.Version)
			if err != nil || (ivy == resolver.Ivy251) != (l.Ivy == "2.5.1") {
				t.Errorf("resolver.IvyOf(%s) = %q, %v; the table says Ivy %s", l.Version, ivy, err, l.Ivy)
			}
			jars := filepath.Join(testenv.CacheDir(), "pyspark-"+l.Version, "pyspark", "jars")
			if _, err := os.Stat(jars); err != nil {
				if l.CI {
					testenv.Skip(t, "pyspark "+l.Version+" not installed: run hack/infra.sh")
				}
				t.Skip("pyspark " + l.Version + " not installed (make parity-lines installs it)")
			}
			for _, want := range []string{"ivy-" + l.Ivy + ".jar", "spark-core_" + l.Scala + "-" + l.Version + ".jar"} {
				if _, err := os.Stat(filepath.Join(jars, want)); err != nil {
					t.Errorf("pyspark %s: %v", l.Version, err)
				}
			}
			if m, _ := filepath.Glob(filepath.Join(jars, "scala-library-"+l.Scala+".*.jar")); len(m) != 1 {
				t.Errorf("pyspark %s: scala-library %s: %v", l.Version, l.Scala, m)
			}
		})
	}
}

// TestInfraSparkVersions: hack/infra.d/60-spark.sh installs by default
// what .ci/run uses: testenv.SparkVersions and the CI lines.
func TestInfraSparkVersions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "infra.d", "60-spark.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`PREBAKE_SPARK_VERSIONS:-([0-9. ]+)\}`).FindSubmatch(data)
	if m == nil {
		t.Fatal("60-spark.sh: no default PREBAKE_SPARK_VERSIONS")
	}
	got := strings.Fields(string(m[1]))
	want := testenv.CISparkVersions()
	slices.Sort(got)
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("60-spark.sh's default versions (-want +got):\n%s", d)
	}
}
