package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	if len(cases) < 40 || lines["3.5"] == 0 || lines["4.0"] == 0 {
		t.Fatalf("the suite has %d cases (%v by Spark line), want at least 40 over 3.5 and 4.0", len(cases), lines)
	}
	mirror := t.TempDir()
	if err := unpackMirror(filepath.Join(testdata, mirrorArchive), mirror); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := readGolden(goldenPath(root, c))
			if err != nil {
				t.Fatalf("%v (record it: go run ./hack/central -record -only %s)", err, c.name)
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
	if len(a) != 10 {
		t.Fatalf("%d sets, want 5 per Spark line", len(a))
	}
	for _, c := range a {
		n := len(strings.Split(c.coords, ","))
		if n < 2 || n > 4 || strings.Contains(c.coords, "etl-udfs") {
			t.Errorf("%s: %d packages (%s), want 2–4 popular ones", c.name, n, c.coords)
		}
	}
}
